import BrokerTLS

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
    /// The transport refused the peer for a cause it names (a certificate that does not verify, say).
    case refused(HTTPClientError)
}

/// The byte stream under one client connection: plain TCP, or TLS over it.
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
    /// Whether bytes are already read from the socket but not yet returned (TLS records), so no readiness will announce them.
    var hasBuffered: Bool { get }
}

/// TCP as is: `recv` and `send` on the descriptor.
final class PlainTransport: Transport {
    private let fd: Int32

    init(fd: Int32) {
        self.fd = fd
    }

    var hasBuffered: Bool { false }

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

/// TLS over the descriptor (``TLSSession``): the handshake in `open`, then records both ways.
final class TLSTransport: Transport {
    private let session: TLSSession

    /// Prepares TLS over the connected `fd` for `host`; nothing is sent until `open`.
    init(context: TLSContext, fd: Int32, host: String) throws(HTTPClientError) {
        do throws(TLSError) {
            session = try TLSSession(context: context, fd: fd, host: host)
        } catch {
            throw TLSTransport.clientError(error)
        }
    }

    var hasBuffered: Bool { session.hasBuffered }

    func open() -> TransportResult { result(session.handshake()) }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult { result(session.read(into: buffer)) }

    func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult { result(session.write(bytes)) }

    func close() { session.close() }

    private func result(_ step: TLSStep) -> TransportResult {
        switch step {
        case .done(let n): .bytes(n)
        case .wantRead: .wouldBlock(wantsWrite: false)
        case .wantWrite: .wouldBlock(wantsWrite: true)
        case .end: .end
        case .failed(.connectionLost): .failed(0)
        case .failed(let error): .refused(Self.clientError(error))
        }
    }

    /// The client's name for each TLS failure.
    static func clientError(_ error: TLSError) -> HTTPClientError {
        switch error {
        case .certificate(let reason): .tlsCertificate(reason: reason)
        case .hostname: .tlsHostname
        case .version: .tlsVersion
        case .handshake(let reason), .unavailable(let reason), .caFile(let reason),
            .clientCertificate(let reason):
            .tlsHandshake(reason: reason)
        case .connectionLost: .connectionLost
        }
    }
}
