import BrokerHTTP
import Testing

/// RFC 9112 §6: Content-Length, Transfer-Encoding, smuggling and pipelining (catalogue 7–10, 20).
struct HTTPParserFramingTests {
    static let rejected: [RawCase] = [
        // Content-Length (RFC 9112 §6.3 item 5, RFC 9110 §8.6, catalogue 8).
        RawCase("two different Content-Length fields", Raw.post(["Content-Length: 1", "Content-Length: 2"], body: "ab"), 400),
        RawCase("two equal Content-Length fields", Raw.post(["Content-Length: 5", "Content-Length: 5"], body: "hello"), 400),
        RawCase("Content-Length list 1, 2", Raw.post(["Content-Length: 1, 2"], body: "ab"), 400),
        RawCase("Content-Length list 5, 5", Raw.post(["Content-Length: 5, 5"], body: "hello"), 400),
        RawCase("Content-Length +5", Raw.post(["Content-Length: +5"], body: "hello"), 400),
        RawCase("Content-Length -1", Raw.post(["Content-Length: -1"]), 400),
        RawCase("Content-Length 0x5", Raw.post(["Content-Length: 0x5"], body: "hello"), 400),
        RawCase("Content-Length 1 0", Raw.post(["Content-Length: 1 0"], body: "0123456789"), 400),
        RawCase("Content-Length 1_0", Raw.post(["Content-Length: 1_0"], body: "0123456789"), 400),
        RawCase("Content-Length empty", Raw.post(["Content-Length:"]), 400),
        RawCase("Content-Length 19 digits", Raw.post(["Content-Length: 1000000000000000000"]), 400),
        RawCase("Content-Length 20+ digits", Raw.post(["Content-Length: 99999999999999999999999"]), 400),
        RawCase("Content-Length with vertical tab", Raw.post(["Content-Length: 5\u{0B}"], body: "hello"), 400),
        // Transfer-Encoding (RFC 9112 §6.1 and §6.3, catalogue 9 and 10).
        RawCase("Transfer-Encoding gzip", Raw.post(["Transfer-Encoding: gzip"], body: "0\r\n\r\n"), 501),
        RawCase("Transfer-Encoding xchunked", Raw.post(["Transfer-Encoding: xchunked"], body: "0\r\n\r\n"), 501),
        RawCase("Transfer-Encoding identity", Raw.post(["Transfer-Encoding: identity"], body: "0\r\n\r\n"), 501),
        RawCase("Transfer-Encoding gzip, chunked", Raw.post(["Transfer-Encoding: gzip, chunked"], body: "0\r\n\r\n"), 501),
        RawCase("gzip then chunked fields", Raw.post(["Transfer-Encoding: gzip", "Transfer-Encoding: chunked"]), 501),
        RawCase("Transfer-Encoding chunked, gzip", Raw.post(["Transfer-Encoding: chunked, gzip"], body: "0\r\n\r\n"), 400),
        RawCase("chunked then gzip fields", Raw.post(["Transfer-Encoding: chunked", "Transfer-Encoding: gzip"]), 400),
        RawCase("Transfer-Encoding chunked, chunked", Raw.post(["Transfer-Encoding: chunked, chunked"], body: "0\r\n\r\n"), 400),
        RawCase("two chunked fields", Raw.post(["Transfer-Encoding: chunked", "Transfer-Encoding: chunked"]), 400),
        RawCase("chunked with a parameter", Raw.post(["Transfer-Encoding: chunked;q=1"], body: "0\r\n\r\n"), 400),
        RawCase("Transfer-Encoding empty", Raw.post(["Transfer-Encoding:"], body: "0\r\n\r\n"), 400),
        RawCase("space inside coding", Raw.post(["Transfer-Encoding: chun ked"], body: "0\r\n\r\n"), 400),
        RawCase("vertical tab before chunked", Raw.post(["Transfer-Encoding: \u{0B}chunked"], body: "0\r\n\r\n"), 400),
        RawCase("form feed after chunked", Raw.post(["Transfer-Encoding: chunked\u{0C}"], body: "0\r\n\r\n"), 400),
        RawCase("NUL inside chunked", Raw.post(["Transfer-Encoding: chun\u{0}ked"], body: "0\r\n\r\n"), 400),
        RawCase(
            "Transfer-Encoding on HTTP/1.0",
            "POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        RawCase(
            "Content-Length with Transfer-Encoding",
            Raw.post(["Content-Length: 5", "Transfer-Encoding: chunked"], body: "0\r\n\r\n"), 400),
        RawCase(
            "Transfer-Encoding with Content-Length",
            Raw.post(["Transfer-Encoding: chunked", "Content-Length: 5"], body: "0\r\n\r\n"), 400),
        RawCase(
            "Content-Length with unsupported Transfer-Encoding",
            Raw.post(["Content-Length: 5", "Transfer-Encoding: gzip"], body: "hello"), 400),
    ]

    @Test("Faulty body framing is rejected with its status", arguments: rejected)
    func rejectsFaultyFraming(_ rawCase: RawCase) {
        rawCase.check()
    }

    @Test(
        "Transfer-Encoding chunked is accepted in any case and with OWS",
        arguments: [
            "chunked", "Chunked", "CHUNKED", "chunked ", "\tchunked\t", ", chunked", "chunked,",
        ])
    func acceptsChunkedSpellings(_ value: String) throws {
        let outcome = ParserFeeder.outcome(Raw.post(["Transfer-Encoding: \(value)"], body: "3\r\nabc\r\n0\r\n\r\n"))
        let request = try #require(outcome.requests.first)
        #expect(request.framing == .chunked)
        #expect(request.bodyText == "abc")
    }

    @Test(
        "Content-Length bodies are delivered exactly",
        arguments: [
            ("0", ""), ("5", "hello"), ("005", "hello"), (" 3 ", "abc"),
        ])
    func deliversContentLengthBody(_ value: String, _ body: String) throws {
        let outcome = ParserFeeder.outcome(Raw.post(["Content-Length: \(value)"], body: body))
        let request = try #require(outcome.requests.first)
        #expect(request.framing == .length(body.utf8.count))
        #expect(request.bodyText == body)
        #expect(outcome.unconsumed == 0 && outcome.idleAtEnd)
    }

    @Test func requestWithoutFramingHasNoBody() throws {
        let outcome = ParserFeeder.outcome(Raw.get())
        let request = try #require(outcome.requests.first)
        #expect(request.framing == .none)
        #expect(request.body.isEmpty)
    }

    @Test(
        "CL+TE followed by a smuggled GET yields one error and nothing else",
        arguments: [
            ["Content-Length: 6", "Transfer-Encoding: chunked"],
            ["Transfer-Encoding: chunked", "Content-Length: 6"],
        ])
    func rejectsSmugglingAttempt(_ framing: [String]) {
        let smuggled = "GET /smuggled HTTP/1.1\r\nHost: example.com\r\n\r\n"
        let outcome = ParserFeeder.outcome(Raw.post(framing, body: "0\r\n\r\n" + smuggled))
        #expect(outcome.status == 400)
        #expect(outcome.requests.isEmpty)
        #expect(outcome.pendingHead == nil)
    }

    @Test func parsesThreePipelinedRequestsInOrder() {
        let text =
            Raw.get("/first")
            + Raw.post(["Content-Length: 11"], body: "second body")
            + Raw.chunked("5\r\nthird\r\n5\r\n body\r\n0\r\n\r\n")
        let outcome = ParserFeeder.outcome(text)
        #expect(outcome.error == nil)
        #expect(outcome.requests.map(\.path) == ["/first", "/submit", "/submit"])
        #expect(outcome.requests.map(\.bodyText) == ["", "second body", "third body"])
        #expect(outcome.requests.map(\.framing) == [.none, .length(11), .chunked])
        #expect(outcome.unconsumed == 0 && outcome.idleAtEnd)
    }

    @Test func getWithContentLengthBodyIsFramedBeforeTheNextRequest() {
        // Catalogue 20: the body bytes look like a request but must never be parsed as one.
        let hidden = "GET /hidden HTTP/1.1\r\nHost: a\r\n\r\n"
        let text = Raw.get("/with-body", ["Content-Length: \(hidden.utf8.count)"]) + hidden + Raw.get("/next")
        let outcome = ParserFeeder.outcome(text)
        #expect(outcome.error == nil)
        #expect(outcome.requests.map(\.path) == ["/with-body", "/next"])
        #expect(outcome.requests.first?.bodyText == hidden)
    }

    @Test func contentLengthZeroLeavesTheNextRequestIntact() {
        let text = Raw.post(["Content-Length: 0"]) + Raw.get("/poisoned?no")
        let outcome = ParserFeeder.outcome(text)
        #expect(outcome.requests.map(\.path) == ["/submit", "/poisoned"])
        #expect(outcome.requests.map(\.bodyText) == ["", ""])
    }

    @Test func errorInSecondPipelinedRequestKeepsTheFirst() {
        let text = Raw.get("/ok") + "GET / HTTP/1.1\r\nHost : a\r\n\r\n" + Raw.get("/never")
        let outcome = ParserFeeder.outcome(text)
        #expect(outcome.requests.map(\.path) == ["/ok"])
        #expect(outcome.status == 400)
    }

    @Test func partialBodyIsConsumedAndWaitsForTheRest() {
        let outcome = ParserFeeder.outcome(Raw.post(["Content-Length: 10"], body: "12345"))
        #expect(outcome.requests.isEmpty)
        #expect(outcome.pendingHead?.framing == .length(10))
        #expect(outcome.unconsumed == 0)
        #expect(!outcome.idleAtEnd)
    }
}
