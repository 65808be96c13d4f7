import BrokerTestSupport
import Foundation
import Glibc
import Synchronization

/// A loopback listener that plays a fixed script instead of PostgreSQL: for each step it waits for the client to
/// send something, then writes that step's bytes; after the last step it holds the connection until closed.
final class ScriptedPostgresServer: @unchecked Sendable {
    // @unchecked: `fd` is set once in init; the accept thread only reads it and ends when it is closed.

    /// The port it listens on.
    let port: Int
    private let fd: Int32
    /// Set by ``close()``: a connection held unread (`reading: false`) is let go.
    private let stopped = Atomic<Bool>(false)

    /// Listens on 127.0.0.1 and serves `steps` to every connection. With `reading` false, the connection is then held
    /// without reading anything more (the client's writes fill the socket buffers) until the client closes it.
    init(steps: [[UInt8]], reading: Bool = true) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = Loopback.address(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw PostgresTestError("scripted server: bind/listen failed, errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let listener = fd
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 4096)
                for step in steps {
                    guard recv(client, &buffer, buffer.count, 0) > 0 else { break }
                    _ = send(client, step, step.count, Int32(MSG_NOSIGNAL))
                }
                if reading {
                    while recv(client, &buffer, buffer.count, 0) > 0 {}
                } else {
                    // POLLRDHUP (0x2000, Linux; Glibc does not export it): the client's end, with its bytes unread.
                    var descriptor = pollfd(fd: client, events: 0x2000, revents: 0)
                    while poll(&descriptor, 1, 20) == 0 && !stopped.load(ordering: .relaxed) {}
                }
                Glibc.close(client)
            }
        }
    }

    /// Stops listening.
    func close() {
        stopped.store(true, ordering: .relaxed)
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }

    /// A backend message: type, length counting itself, body.
    static func message(_ type: Character, _ body: [UInt8]) -> [UInt8] {
        [type.asciiValue!] + int32(Int32(body.count + 4)) + body
    }

    static func int32(_ value: Int32) -> [UInt8] {
        let bits = UInt32(bitPattern: value)
        return [UInt8(bits >> 24), UInt8((bits >> 16) & 0xff), UInt8((bits >> 8) & 0xff), UInt8(bits & 0xff)]
    }
}
