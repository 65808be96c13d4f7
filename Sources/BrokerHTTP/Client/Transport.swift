#if canImport(Glibc)
import Glibc
#endif

/// What one transport call achieved on a non-blocking socket.
enum TransportResult: Equatable {
    /// This many bytes were read or written (more than zero).
    case bytes(Int)
    /// Nothing can move until the socket is readable (`wantsWrite` false) or writable (true).
    case wouldBlock(wantsWrite: Bool)
    /// The peer ended its output (read only).
    case end
    /// The connection failed; errno, or 0 when the transport has no errno to give.
    case failed(Int32)
}

/// The byte stream under one client connection: plain TCP now, TLS in the same place later.
///
/// Every call is made on the connection's worker queue and never blocks. A TLS
/// transport may want to write while the connection reads (and the other way
/// round), which is why `wouldBlock` says which readiness to wait for; the plain
/// transport always waits for the direction of the call.
protocol Transport: AnyObject {
    /// Runs the transport's own opening (a TLS handshake) one step; `.bytes(0)` when it is done.
    func open() -> TransportResult
    /// Reads into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult
    /// Writes from `bytes`; a partial write returns what was taken.
    func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult
    /// Releases the transport's own state; the connection closes the descriptor.
    func close()
}

/// TCP as is: `recv` and `send` on the descriptor.
final class PlainTransport: Transport {
    private let fd: Int32

    init(fd: Int32) {
        self.fd = fd
    }

    func open() -> TransportResult { .bytes(0) }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult {
        let n = recv(fd, buffer.baseAddress, buffer.count, 0)
        if n > 0 { return .bytes(n) }
        if n == 0 { return .end }
        switch errno {
        case EAGAIN, EWOULDBLOCK, EINTR: return .wouldBlock(wantsWrite: false)
        case let code: return .failed(code)
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult {
        let n = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
        if n > 0 { return .bytes(n) }
        switch errno {
        case EAGAIN, EWOULDBLOCK, EINTR: return .wouldBlock(wantsWrite: true)
        case let code: return .failed(code)
        }
    }

    func close() {}
}
