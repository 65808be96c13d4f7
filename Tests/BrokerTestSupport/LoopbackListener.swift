import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A listening socket on 127.0.0.1 that nobody serves: it stands for an internal service a test proves is never
/// connected to. Connections the kernel completed wait in its backlog until ``acceptedCount()`` takes them.
public final class LoopbackListener: @unchecked Sendable {
    // @unchecked: the descriptor is only read after init; accept runs on the calling thread.
    private let fd: Int32
    /// The port the kernel chose.
    public let port: Int

    /// Listens on 127.0.0.1 on a port the kernel picks; closed when the listener is released.
    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Loopback.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else {
            Glibc.close(fd)
            throw LoopbackError("cannot listen on 127.0.0.1: errno \(errno)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { Glibc.close(fd) }

    /// How many connections were made to it so far (each is accepted and closed here).
    public func acceptedCount() -> Int {
        var count = 0
        while true {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return count }
            Glibc.close(client)
            count += 1
        }
    }
}
