import Foundation
import Glibc
import Synchronization

/// A tiny HTTP/1.1 server on 127.0.0.1 with a kernel-chosen port, answering each connection once with a canned reply.
///
/// `reply` gets the raw request head and body and returns the raw response
/// bytes, or nil to keep the connection open without answering (a stalled provider).
final class LocalHTTPServer: Sendable {
    /// The port the kernel chose.
    let port: UInt16
    private let listener: Int32
    private let received = Mutex<[String]>([])
    private let openConnections = Mutex<[Int32]>([])
    private let reply: @Sendable (String) -> String?

    /// Binds 127.0.0.1:0, reads the port back, and starts accepting on a background thread.
    init(reply: @escaping @Sendable (String) -> String?) throws {
        self.reply = reply
        (listener, port) = try Self.listenOnLoopback(backlog: 16)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// A socket listening on 127.0.0.1 with a port the kernel chose, and that port.
    static func listenOnLoopback(backlog: Int32) throws -> (descriptor: Int32, port: UInt16) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw SocketSetupError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, backlog) == 0 else {
            close(listener)
            throw SocketSetupError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        return (listener, UInt16(bigEndian: address.sin_port))
    }

    /// Every request received so far, head and body as text.
    var requests: [String] { received.withLock { $0 } }

    /// Stops accepting and closes every connection.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for connection in openConnections.withLock({ $0 }) {
            shutdown(connection, Int32(SHUT_RDWR))
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> String {
        "http://127.0.0.1:\(port)\(path)"
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            let request = readRequest(connection)
            received.withLock { $0.append(request) }
            guard let response = reply(request) else {
                openConnections.withLock { $0.append(connection) }
                continue
            }
            let bytes = Array(response.utf8)
            _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(connection)
        }
    }

    /// Reads the head and a Content-Length body.
    private func readRequest(_ connection: Int32) -> String {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            data.append(contentsOf: buffer[0..<count])
            let text = String(decoding: data, as: UTF8.self)
            guard let headEnd = text.range(of: "\r\n\r\n") else { continue }
            let head = text[..<headEnd.lowerBound].lowercased()
            let length =
                head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            if text.utf8.count - text[..<headEnd.upperBound].utf8.count >= length { break }
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A loopback listener that could not be set up; the message names the call and errno.
struct SocketSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
