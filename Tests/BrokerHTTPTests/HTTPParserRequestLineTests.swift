import BrokerHTTP
import Testing

/// RFC 9112 §3: request line, methods, request-target forms and versions.
struct HTTPParserRequestLineTests {
    static let rejected: [RawCase] = [
        // Methods (RFC 9112 §3, catalogue 18).
        RawCase("unknown method", "FOO / HTTP/1.1\r\nHost: a\r\n\r\n", 501),
        RawCase("lowercase known method", "get / HTTP/1.1\r\nHost: a\r\n\r\n", 501),
        RawCase("method of 40 token bytes", String(repeating: "M", count: 40) + " / HTTP/1.1\r\nHost: a\r\n\r\n", 501),
        RawCase("invalid byte in method", "G@T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("empty method", " / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("tab after method", "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("NUL in method", "GE\u{0}T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        // Separators.
        RawCase("two spaces before target", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("two spaces before version", "GET /  HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("space after version", "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400),
        RawCase("space inside target", "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        // Request-target (RFC 9112 §3.2).
        RawCase("asterisk with GET", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("relative target", "GET a/b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("authority-form", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 400),
        RawCase("ftp absolute-form", "GET ftp://example.com/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("absolute-form without host", "GET http:///p HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("absolute-form with userinfo", "GET http://user@example.com/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("NUL in target", "GET /a\u{0}b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("tab in target", "GET /a\tb HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("DEL in target", "GET /a\u{7F}b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("non-ASCII in target", "GET /caf\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("raw 0xFF in target", Array("GET /a".utf8) + [0xFF] + Array(" HTTP/1.1\r\nHost: a\r\n\r\n".utf8), 400),
        // Versions (RFC 9112 §2.3, catalogue 17).
        RawCase("HTTP/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        RawCase("HTTP/3.0", "GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505),
        RawCase("HTTP/9.9", "GET / HTTP/9.9\r\nHost: a\r\n\r\n", 505),
        RawCase("lowercase version", "GET / http/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("HTTP/1.x", "GET / HTTP/1.x\r\nHost: a\r\n\r\n", 400),
        RawCase("HTTP/01.1", "GET / HTTP/01.1\r\nHost: a\r\n\r\n", 400),
        RawCase("HTTP/1.10", "GET / HTTP/1.10\r\nHost: a\r\n\r\n", 400),
        RawCase("HTTP/1", "GET / HTTP/1\r\nHost: a\r\n\r\n", 400),
        RawCase("HTTP/0.9 line without version", "GET /\r\n\r\n", 400),
        RawCase("request line without target or version", "GET\r\n\r\n", 400),
        // Line endings (RFC 9112 §2.2, catalogue 5 and 6).
        RawCase("bare LF after request line", "GET / HTTP/1.1\nHost: a\r\n\r\n", 400),
        RawCase("bare CR after request line", "GET / HTTP/1.1\rHost: a\r\n\r\n", 400),
        RawCase("bare LF before request line", "\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("bare CR before request line", "\rGET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        RawCase("nine empty lines first", String(repeating: "\r\n", count: 9) + "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ]

    @Test("A malformed request line is rejected with its status", arguments: rejected)
    func rejectsMalformedRequestLine(_ rawCase: RawCase) {
        rawCase.check()
    }

    @Test("Every known method is parsed", arguments: HTTPMethod.allCases)
    func parsesKnownMethod(_ method: HTTPMethod) throws {
        let outcome = ParserFeeder.outcome("\(method.rawValue) /m HTTP/1.1\r\nHost: a\r\n\r\n")
        let request = try #require(outcome.requests.first)
        #expect(outcome.error == nil)
        #expect(request.method == method)
        #expect(request.path == "/m")
    }

    @Test func splitsOriginFormIntoPathAndQuery() throws {
        let outcome = ParserFeeder.outcome(Raw.get("/a/b%20c?x=1&y=/z?"))
        let request = try #require(outcome.requests.first)
        #expect(request.target == "/a/b%20c?x=1&y=/z?")
        #expect(request.path == "/a/b%20c")
        #expect(request.query == "x=1&y=/z?")
    }

    @Test func distinguishesEmptyQueryFromNone() throws {
        let withMark = try #require(ParserFeeder.outcome(Raw.get("/p?")).requests.first)
        let without = try #require(ParserFeeder.outcome(Raw.get("/p")).requests.first)
        #expect(withMark.path == "/p" && withMark.query == "")
        #expect(without.path == "/p" && without.query == nil)
    }

    @Test(
        "Absolute-form gives its path and query",
        arguments: [
            ("http://example.com/p/q?x=1", "/p/q", "x=1"),
            ("http://example.com", "/", nil),
            ("HTTPS://example.com:8443?x", "/", "x"),
            ("http://[::1]:8080/v", "/v", nil),
        ] as [(String, String, String?)])
    func parsesAbsoluteForm(target: String, path: String, query: String?) throws {
        let request = try #require(ParserFeeder.outcome(Raw.get(target)).requests.first)
        #expect(request.target == target)
        #expect(request.path == path)
        #expect(request.query == query)
    }

    @Test func acceptsAsteriskFormForOptions() throws {
        let request = try #require(ParserFeeder.outcome("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n").requests.first)
        #expect(request.method == .OPTIONS)
        #expect(request.target == "*" && request.path == "*" && request.query == nil)
    }

    @Test("HTTP/1.x versions are accepted with their minor", arguments: [0, 1, 2, 9])
    func acceptsHTTP1Versions(minor: Int) throws {
        let request = try #require(ParserFeeder.outcome("GET / HTTP/1.\(minor)\r\nHost: a\r\n\r\n").requests.first)
        #expect(request.version == HTTPVersion(major: 1, minor: minor))
        // RFC 9112 §9.3: any minor above 0 has HTTP/1.1 persistence.
        #expect(request.keepAlive == (minor != 0))
    }

    @Test func higherMinorVersionStillNeedsHost() {
        #expect(ParserFeeder.outcome("GET / HTTP/1.2\r\n\r\n").status == 400)
    }

    @Test func ignoresUpToEightEmptyLinesBeforeTheRequest() throws {
        let text = String(repeating: "\r\n", count: 8) + Raw.get("/after-blank-lines")
        let outcome = ParserFeeder.outcome(text)
        let request = try #require(outcome.requests.first)
        #expect(request.path == "/after-blank-lines")
        #expect(outcome.unconsumed == 0)
    }

    @Test func acceptsTargetWithEveryVisibleASCIIByte() throws {
        let visible = String(decoding: (0x21...0x7E).map { UInt8($0) }, as: UTF8.self)
        let request = try #require(ParserFeeder.outcome(Raw.get("/" + visible)).requests.first)
        #expect(request.target == "/" + visible)
    }
}
