import Testing

@testable import BrokerHTTP

/// The parser's contract with the server: events, idleness, persistence and expectations.
struct HTTPParserTests {
    @Test func parsesATypicalRequest() throws {
        let outcome = ParserFeeder.outcome("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let request = try #require(outcome.requests.first)
        #expect(request.method == .GET)
        #expect(request.target == "/healthz" && request.path == "/healthz" && request.query == nil)
        #expect(request.version == .http1_1)
        #expect(request.fields == [TestField(name: "Host", value: "x")])
        #expect(request.keepAlive && !request.expectContinue)
        #expect(request.framing == .none && request.body.isEmpty)
        #expect(outcome.unconsumed == 0 && outcome.idleAtEnd)
    }

    @Test func isIdleOnlyBeforeTheFirstByteOfARequest() {
        var parser = HTTPParser()
        #expect(parser.isIdle)
        let first: [UInt8] = Array("G".utf8)
        let event = first.withUnsafeBytes { parser.parse($0) }
        #expect(event.consumed == 0)
        #expect(!parser.isIdle, "the header deadline runs from the first byte")

        var whole = HTTPParser()
        var buffer = Array(Raw.post(["Content-Length: 2"], body: "ok").utf8)
        let head = buffer.withUnsafeBytes { whole.parse($0) }
        guard case .head = head.event else {
            Issue.record("expected a head, got \(head.event)")
            return
        }
        #expect(!whole.isIdle)
        buffer.removeFirst(head.consumed)
        let end = buffer.withUnsafeBytes { whole.parse($0) }
        guard case .end(let body) = end.event else {
            Issue.record("expected an end, got \(end.event)")
            return
        }
        #expect(body == Array("ok".utf8) && end.consumed == 2)
        #expect(whole.isIdle)
    }

    @Test func emptyLinesBeforeARequestAreNotIdle() {
        var parser = HTTPParser()
        _ = Array("\r\n".utf8).withUnsafeBytes { parser.parse($0) }
        #expect(!parser.isIdle)
    }

    @Test func resumesScanningWhereItStoppedWithoutConsuming() {
        var parser = HTTPParser()
        let text = Array("GET /resume HTTP/1.1\r\nHost: a\r\nX-Long: abcdef".utf8)
        for end in 1...text.count {
            let result = text[..<end].withUnsafeBytes { parser.parse($0) }
            guard case .needMore = result.event else {
                Issue.record("unexpected \(result.event)")
                return
            }
            #expect(result.consumed == 0)
            // Each call scans only the new bytes: the resume point is the end of what was given.
            #expect(parser.scan.pos == end)
        }
    }

    @Test func failedParserStaysFailedForNewBytes() {
        var parser = HTTPParser()
        let bad = Array("BAD\u{0} / HTTP/1.1\r\n".utf8)
        let first = bad.withUnsafeBytes { parser.parse($0) }
        let second = Array(Raw.get().utf8).withUnsafeBytes { parser.parse($0) }
        guard case .error(let e1) = first.event, case .error(let e2) = second.event else {
            Issue.record("expected errors, got \(first.event) and \(second.event)")
            return
        }
        #expect(e1 == e2 && e1.status == .badRequest)
        #expect(!parser.isIdle)
    }

    @Test func emptyInputNeedsMore() {
        var parser = HTTPParser()
        let result = [UInt8]().withUnsafeBytes { parser.parse($0) }
        guard case .needMore = result.event else {
            Issue.record("expected needMore, got \(result.event)")
            return
        }
        #expect(result.consumed == 0 && parser.isIdle)
    }

    @Test(
        "Connection decides persistence (RFC 9112 §9.3)",
        arguments: [
            ("HTTP/1.1", nil, true),
            ("HTTP/1.1", "close", false),
            ("HTTP/1.1", "Close", false),
            ("HTTP/1.1", "keep-alive, close", false),
            ("HTTP/1.1", "upgrade", true),
            ("HTTP/1.1", "closed", true),
            ("HTTP/1.0", nil, false),
            ("HTTP/1.0", "keep-alive", true),
            ("HTTP/1.0", "Keep-Alive", true),
            ("HTTP/1.0", "foo, keep-alive", true),
            ("HTTP/1.0", "keep-alive, close", false),
            ("HTTP/1.0", "close", false),
        ] as [(String, String?, Bool)])
    func decidesKeepAlive(version: String, connection: String?, keepAlive: Bool) throws {
        let connectionLine = connection.map { "Connection: \($0)\r\n" } ?? ""
        let outcome = ParserFeeder.outcome("GET / \(version)\r\nHost: a\r\n\(connectionLine)\r\n")
        let request = try #require(outcome.requests.first)
        #expect(request.keepAlive == keepAlive)
    }

    @Test func closeInAnyConnectionFieldWins() throws {
        let outcome = ParserFeeder.outcome(Raw.get("/", ["Connection: keep-alive", "Connection: close"]))
        #expect(try #require(outcome.requests.first).keepAlive == false)
    }

    @Test(
        "Expect on HTTP/1.1 (RFC 9110 §10.1.1)",
        arguments: [
            ("100-continue", true, nil), ("100-Continue", true, nil),
            ("foo", false, 417), ("100-continue, foo", false, 417), ("", false, 417),
        ] as [(String, Bool, Int?)])
    func handlesExpect(value: String, continues: Bool, status: Int?) {
        let outcome = ParserFeeder.outcome(Raw.post(["Expect: \(value)", "Content-Length: 2"], body: "ok"))
        #expect(outcome.status == status)
        if status == nil {
            #expect(outcome.requests.first?.expectContinue == continues)
            #expect(outcome.requests.first?.bodyText == "ok")
        }
    }

    @Test func headWithExpectContinueComesBeforeAnyBodyByte() {
        // The server answers 100 Continue on .head; the client sends the body only then.
        let outcome = ParserFeeder.outcome(Raw.post(["Expect: 100-continue", "Content-Length: 4"]))
        #expect(outcome.requests.isEmpty)
        #expect(outcome.pendingHead?.expectContinue == true)
        #expect(outcome.pendingHead?.framing == .length(4))
    }

    @Test("Expect is ignored on HTTP/1.0", arguments: ["100-continue", "foo"])
    func ignoresExpectOnHTTP10(_ value: String) throws {
        let outcome = ParserFeeder.outcome("POST / HTTP/1.0\r\nExpect: \(value)\r\nContent-Length: 2\r\n\r\nok")
        let request = try #require(outcome.requests.first)
        #expect(!request.expectContinue)
        #expect(request.bodyText == "ok")
    }

    @Test func errorsCarryAStableCodeAndNoRequestBytes() {
        let outcome = ParserFeeder.outcome("GET / HTTP/1.1\r\nHost: secret-token@x\r\n\r\n")
        #expect(outcome.error?.code == "bad_request")
        #expect(outcome.error?.message.contains("secret") == false)
    }
}
