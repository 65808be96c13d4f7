import BrokerTestSupport
import Dispatch
import Foundation
import Glibc

/// A loopback TCP listener that is not Redis: it never answers, or answers every request with fixed bytes.
final class FakeRedisListener: @unchecked Sendable {
    // @unchecked: `fd` is set once in init; the accept loop only reads it and stops when it is closed.

    /// The port it listens on.
    let port: Int
    private let fd: Int32

    /// Listens on 127.0.0.1; with `reply`, accepts connections and writes `reply` after each read, else never accepts.
    init(reply: [UInt8]? = nil) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = Loopback.address(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw RedisTestError("fake listener: bind/listen failed, errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        guard let reply else { return }
        let listener = fd
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 4096)
                while recv(client, &buffer, buffer.count, 0) > 0 {
                    _ = send(client, reply, reply.count, Int32(MSG_NOSIGNAL))
                }
                Glibc.close(client)
            }
        }
    }

    /// Stops listening.
    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }
}
