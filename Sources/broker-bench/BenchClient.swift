import Foundation

#if canImport(Glibc)
import Glibc
#endif

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
    /// The last read ended with SO_RCVTIMEO (no answer in 10 s), not with the server closing the connection.
    private var timedOut = false

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

    /// One GET; reconnects once if the server had closed the idle connection. Not sent again after a timeout or
    /// once a reply began: a callback is answered once, and a second try would only be told its flow is gone.
    func get(_ target: String, headers: [(String, String)] = []) -> Reply? {
        for _ in 0..<2 {
            let reused = fd >= 0
            guard connectIfNeeded() else { return nil }
            var text = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
            for (name, value) in headers { text += "\(name): \(value)\r\n" }
            text += "\r\n"
            let bytes = Array(text.utf8)
            let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent == bytes.count, let reply = readReply() { return reply }
            let closedIdle = reused && buffer.isEmpty && !timedOut
            close(fd)
            fd = -1
            if !closedIdle { return nil }
        }
        return nil
    }

    private func readReply() -> Reply? {
        var chunk = [UInt8](repeating: 0, count: 16384)
        timedOut = false
        while true {
            if let end = headEnd() {
                // Byte-level parsing: Foundation's components(separatedBy:) and trimmingCharacters(in:)
                // cost this load generator half its CPU, taken from the broker on a 2-core machine.
                guard let headers = Self.parseHead(buffer[0..<end]), let status = headers.status else { return nil }
                let fields = headers.fields
                let length = fields.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
                while buffer.count < end + 4 + length {
                    let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if n <= 0 { timedOut = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK); return nil }
                    buffer.append(contentsOf: chunk[0..<n])
                }
                let body = Array(buffer[(end + 4)..<(end + 4 + length)])
                buffer.removeFirst(end + 4 + length)
                if fields.contains(where: { $0.0.lowercased() == "connection" && $0.1.lowercased() == "close" }) {
                    close(fd)
                    fd = -1
                }
                return Reply(status: status, headers: fields, body: body)
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { timedOut = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK); return nil }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// The status code and header fields of a response head (without its final CRLF CRLF).
    private static func parseHead(_ head: ArraySlice<UInt8>) -> (status: Int?, fields: [(String, String)])? {
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var index = head.startIndex
        while index < head.endIndex {
            if head[index] == 13, index + 1 < head.endIndex, head[index + 1] == 10 {
                lines.append(head[start..<index])
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        lines.append(head[start..<head.endIndex])
        guard let statusLine = lines.first, statusLine.count >= 12 else { return nil }
        let code = statusLine.dropFirst(9).prefix(3)
        let status = Int(String(decoding: code, as: UTF8.self))
        var fields: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 58) else { continue }
            var value = line[(colon + 1)...]
            while let first = value.first, first == 32 || first == 9 { value = value.dropFirst() }
            while let last = value.last, last == 32 || last == 9 { value = value.dropLast() }
            fields.append((String(decoding: line[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return (status, fields)
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }
}
