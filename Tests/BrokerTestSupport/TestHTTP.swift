#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// One blocking HTTP/1.1 exchange over a real socket, with `Connection: close`.
struct TestHTTP {
    struct Reply: Sendable {
        var status: Int
        var headers: [(String, String)]
        var body: String
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        func headers(_ name: String) -> [String] { headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1) }
        /// Cookies set by this response: name → value (empty value means cleared).
        var setCookies: [String: String] {
            var jar: [String: String] = [:]
            for line in headers("Set-Cookie") {
                let pair = line.split(separator: ";")[0]
                guard let eq = pair.firstIndex(of: "=") else { continue }
                jar[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
            }
            return jar
        }
    }

    /// Sends a request and reads the whole response; the blocking part runs off Swift's cooperative pool.
    static func send(port: Int, method: String = "GET", target: String, headers: [(String, String)] = [],
                     body: String = "") async -> Reply? {
        await withCheckedContinuation { continuation in
            // A thread of its own: Dispatch's global queue runs only about one blocking job per core.
            Thread {
                continuation.resume(returning: blockingSend(port: port, method: method, target: target, headers: headers, body: body))
            }.start()
        }
    }

    static func blockingSend(port: Int, method: String, target: String, headers: [(String, String)], body: String) -> Reply? {
        // A failed connect (a loaded machine, a full backlog) is retried; a connection the server
        // accepted and then left unanswered is not, so a dropped response still fails the test.
        let started = Date()
        // Why a reply is missing, on stderr, so a failure in a loaded run can be told apart later.
        func missing(_ why: String) -> Reply? {
            let seconds = String(format: "%.2f", Date().timeIntervalSince(started))
            FileHandle.standardError.write(Data("TestHTTP: \(method) \(target) on port \(port): \(why) after \(seconds) s\n".utf8))
            return nil
        }
        var fd: Int32 = -1
        var connectErrno: Int32 = 0
        for attempt in 0..<3 where fd < 0 {
            if attempt > 0 { usleep(useconds_t(50_000 * attempt)) }
            fd = connectLoopback(port: port)
            if fd < 0 { connectErrno = errno }
        }
        guard fd >= 0 else { return missing("connect failed 3 times (\(String(cString: strerror(connectErrno))))") }
        defer { close(fd) }
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + body
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        var recvErrno: Int32 = 0
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 { recvErrno = errno }
            if n <= 0 { break }
            data.append(contentsOf: chunk[0..<n])
        }
        let response = String(decoding: data, as: UTF8.self)
        guard let split = response.range(of: "\r\n\r\n") else {
            let ending = recvErrno == 0 ? "the server closed" : String(cString: strerror(recvErrno))
            return missing("no complete head in \(data.count) bytes (\(ending))")
        }
        var lines = response[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        guard let status = Int(statusLine.dropFirst(9).prefix(3)) else { return missing("bad status line") }
        let parsed = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Reply(status: status, headers: parsed, body: String(response[split.upperBound...]))
    }

    /// A socket connected to 127.0.0.1:port with a 20 s receive timeout, or -1.
    private static func connectLoopback(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var tv = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else { close(fd); return -1 }
        return fd
    }
}

/// A browser's cookie jar, enough for one host.
final class CookieJar: @unchecked Sendable {
    // @unchecked: used by one test task at a time.
    private(set) var cookies: [String: String] = [:]
    func absorb(_ reply: TestHTTP.Reply) {
        for (name, value) in reply.setCookies {
            if value.isEmpty { cookies[name] = nil } else { cookies[name] = value }
        }
    }
    func set(_ name: String, _ value: String) { cookies[name] = value }
    var header: [(String, String)] {
        cookies.isEmpty ? [] : [("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))]
    }
}
