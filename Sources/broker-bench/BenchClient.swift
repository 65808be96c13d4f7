#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A blocking keep-alive HTTP/1.1 client on one socket, for load generation off the server's process.
final class BenchClient {
    struct Reply {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
        func header(_ name: String) -> String? { headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1 }
        func headers(_ name: String) -> [String] { headers.filter { $0.0.caseInsensitiveCompare(name) == .orderedSame }.map(\.1) }
    }

    private let port: Int
    private var fd: Int32 = -1
    private var buffer: [UInt8] = []

    init(port: Int) { self.port = port }
    deinit { if fd >= 0 { close(fd) } }

    private func connectIfNeeded() -> Bool {
        if fd >= 0 { return true }
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if ok != 0 { close(fd); fd = -1; return false }
        buffer = []
        return true
    }

    /// One GET; reconnects once if the server closed the idle connection.
    func get(_ target: String, headers: [(String, String)] = []) -> Reply? {
        for _ in 0..<2 {
            guard connectIfNeeded() else { return nil }
            var text = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
            for (name, value) in headers { text += "\(name): \(value)\r\n" }
            text += "\r\n"
            let bytes = Array(text.utf8)
            let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent == bytes.count, let reply = readReply() { return reply }
            close(fd)
            fd = -1
        }
        return nil
    }

    private func readReply() -> Reply? {
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            if let end = headEnd() {
                let head = String(decoding: buffer[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
                guard let status = Int(head[0].dropFirst(9).prefix(3)) else { return nil }
                var headers: [(String, String)] = []
                for line in head.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
                }
                let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
                while buffer.count < end + 4 + length {
                    let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if n <= 0 { return nil }
                    buffer.append(contentsOf: chunk[0..<n])
                }
                let body = Array(buffer[(end + 4)..<(end + 4 + length)])
                buffer.removeFirst(end + 4 + length)
                if headers.contains(where: { $0.0.lowercased() == "connection" && $0.1.lowercased() == "close" }) {
                    close(fd)
                    fd = -1
                }
                return Reply(status: status, headers: headers, body: body)
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return nil }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }
}
