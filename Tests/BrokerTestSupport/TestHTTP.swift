import Foundation

/// One HTTP/1.1 exchange over a real socket with `Connection: close`, on a ``RawClient``.
public enum TestHTTP {
    /// A response, its body as text.
    public struct Reply: Sendable {
        /// The status code.
        public var status: Int
        /// The header fields in order.
        public var headers: [(String, String)]
        /// The body as UTF-8 text.
        public var body: String

        /// The first field called `name`, compared without case.
        public func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        /// Every field called `name`, in order.
        public func headers(_ name: String) -> [String] { headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1) }
        /// Cookies set by this response: name → value (empty value means cleared).
        public var setCookies: [String: String] {
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
    public static func send(
        port: Int, method: String = "GET", target: String, headers: [(String, String)] = [],
        body: String = ""
    ) async -> Reply? {
        await offPool { blockingSend(port: port, method: method, target: target, headers: headers, body: body) }
    }

    /// ``send(port:method:target:headers:body:)`` on the calling thread.
    public static func blockingSend(port: Int, method: String, target: String, headers: [(String, String)], body: String) -> Reply? {
        let started = Date()
        // Why a reply is missing, on stderr, so a failure in a loaded run can be told apart later.
        func missing(_ why: String) -> Reply? {
            let seconds = String(format: "%.2f", Date().timeIntervalSince(started))
            FileHandle.standardError.write(Data("TestHTTP: \(method) \(target) on port \(port): \(why) after \(seconds) s\n".utf8))
            return nil
        }
        // A failed connect (a loaded machine, a full backlog) is retried; a connection the server
        // accepted and then left unanswered is not, so a dropped response still fails the test.
        var client: RawClient?
        for attempt in 0..<3 where client == nil {
            if attempt > 0 { usleep(useconds_t(50_000 * attempt)) }
            client = try? RawClient(port: port)
        }
        guard let client else { return missing("connect failed 3 times") }
        // A `Host` among `headers` (a per-account host such as `acme.localhost:PORT`) replaces the loopback one.
        let host = headers.contains { $0.0.lowercased() == "host" } ? "" : "Host: 127.0.0.1:\(port)\r\n"
        var text = "\(method) \(target) HTTP/1.1\r\n\(host)Connection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { text += "Content-Length: \(body.utf8.count)\r\n" }
        client.send(text + "\r\n" + body)
        guard let reply = client.blockingReadResponse(head: method == "HEAD") else {
            let why = client.lastError == 0 ? "the connection closed" : String(cString: strerror(client.lastError))
            return missing("no complete response in \(client.unread.count) bytes (\(why))")
        }
        return Reply(status: reply.status, headers: reply.headers, body: reply.text)
    }
}

/// A browser's cookie jar, enough for one host.
public final class CookieJar: @unchecked Sendable {
    // @unchecked: used by one test task at a time.
    /// Name → value.
    public private(set) var cookies: [String: String] = [:]

    public init() {}

    /// Keeps the cookies `reply` sets and forgets those it clears.
    public func absorb(_ reply: TestHTTP.Reply) {
        for (name, value) in reply.setCookies {
            if value.isEmpty { cookies[name] = nil } else { cookies[name] = value }
        }
    }

    /// Sets one cookie by hand.
    public func set(_ name: String, _ value: String) { cookies[name] = value }

    /// The `Cookie` field to send, if any.
    public var header: [(String, String)] {
        cookies.isEmpty ? [] : [("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))]
    }
}
