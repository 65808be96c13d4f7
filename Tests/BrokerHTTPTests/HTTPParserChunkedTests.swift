import BrokerHTTP
import Testing

/// RFC 9112 §7.1: chunked bodies, extensions and trailers (catalogue 6, 11–13).
struct HTTPParserChunkedTests {
    static let accepted: [(name: String, chunked: String, body: String)] = [
        ("one chunk", "5\r\nhello\r\n0\r\n\r\n", "hello"),
        ("several chunks", "3\r\nabc\r\n1\r\nd\r\n4\r\nefgh\r\n0\r\n\r\n", "abcdefgh"),
        ("no data chunk", "0\r\n\r\n", ""),
        ("uppercase hex", "A\r\n0123456789\r\n0\r\n\r\n", "0123456789"),
        ("lowercase hex", "a\r\n0123456789\r\n0\r\n\r\n", "0123456789"),
        ("leading zeros and 000 terminator", "0005\r\nhello\r\n000\r\n\r\n", "hello"),
        ("extension with token value", "5;a=b\r\nhello\r\n0\r\n\r\n", "hello"),
        ("extension without value", "5;ignored\r\nhello\r\n0;last\r\n\r\n", "hello"),
        ("several extensions", "5;a=b;c;d=e\r\nhello\r\n0\r\n\r\n", "hello"),
        ("quoted extension", "5;a=\"x y;z=\\\"q\\\"\"\r\nhello\r\n0\r\n\r\n", "hello"),
        ("quoted extension then another", "5;a=\"v\";b=w\r\nhello\r\n0\r\n\r\n", "hello"),
        ("BWS around extension parts", "5 ;\ta = b ;c\r\nhello\r\n0\r\n\r\n", "hello"),
        ("trailer field", "5\r\nhello\r\n0\r\nX-Checksum: abc\r\n\r\n", "hello"),
        ("several trailers", "5\r\nhello\r\n0\r\nX-A: 1\r\nX-B:\r\n\r\n", "hello"),
        ("data containing CRLF", "4\r\n\r\n\r\n\r\n0\r\n\r\n", "\r\n\r\n"),
    ]

    @Test("A valid chunked body is decoded exactly", arguments: accepted)
    func decodesChunkedBody(_ sample: (name: String, chunked: String, body: String)) throws {
        let outcome = ParserFeeder.outcome(Raw.chunked(sample.chunked))
        #expect(outcome.error == nil, "\(sample.name): \(outcome.error?.message ?? "")")
        let request = try #require(outcome.requests.first)
        #expect(request.bodyText == sample.body)
        #expect(outcome.unconsumed == 0 && outcome.idleAtEnd)
    }

    static let rejected: [RawCase] = [
        RawCase("size 0x5", Raw.chunked("0x5\r\nhello\r\n0\r\n\r\n"), 400),
        RawCase("size +5", Raw.chunked("+5\r\nhello\r\n0\r\n\r\n"), 400),
        RawCase("size -1", Raw.chunked("-1\r\nx\r\n0\r\n\r\n"), 400),
        RawCase("space before size", Raw.chunked(" 5\r\nhello\r\n0\r\n\r\n"), 400),
        RawCase("space after size", Raw.chunked("5 \r\nhello\r\n0\r\n\r\n"), 400),
        RawCase("empty size line", Raw.chunked("\r\nhello\r\n0\r\n\r\n"), 400),
        RawCase("non-hex size", Raw.chunked("g\r\nhello\r\n0\r\n\r\n"), 400),
        RawCase("semicolon without extension", Raw.chunked("2;\r\nab\r\n0\r\n\r\n"), 400),
        RawCase("extension without semicolon", Raw.chunked("2 ext\r\nab\r\n0\r\n\r\n"), 400),
        RawCase("extension with empty name", Raw.chunked("2;=v\r\nab\r\n0\r\n\r\n"), 400),
        RawCase("extension with empty value", Raw.chunked("2;a=\r\nab\r\n0\r\n\r\n"), 400),
        RawCase("extension with trailing space", Raw.chunked("2;a \r\nab\r\n0\r\n\r\n"), 400),
        RawCase("unterminated quoted extension", Raw.chunked("2;a=\"v\r\nab\r\n0\r\n\r\n"), 400),
        RawCase("control byte in extension", Raw.chunked("2;a\u{0}=v\r\nab\r\n0\r\n\r\n"), 400),
        RawCase("missing CRLF after data", Raw.chunked("5\r\nhello0\r\n\r\n"), 400),
        RawCase("size 5 with 7 bytes", Raw.chunked("5\r\nhello!!\r\n0\r\n\r\n"), 400),
        RawCase("bare LF after size", Raw.chunked("5\nhello\r\n0\r\n\r\n"), 400),
        RawCase("bare CR after size", Raw.chunked("5\rhello\r\n0\r\n\r\n"), 400),
        RawCase("bare LF after data", Raw.chunked("5\r\nhello\n0\r\n\r\n"), 400),
        RawCase("bare LF after last chunk", Raw.chunked("5\r\nhello\r\n0\n\r\n"), 400),
        RawCase("bare LF ending trailers", Raw.chunked("5\r\nhello\r\n0\r\n\n"), 400),
        RawCase("bare LF after a trailer", Raw.chunked("5\r\nhello\r\n0\r\nX-A: 1\n\r\n"), 400),
        RawCase("17 hex digits", Raw.chunked("00000000000000005\r\nhello\r\n0\r\n\r\n"), 400),
        RawCase("size overflowing 64 bits", Raw.chunked("FFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n"), 400),
        RawCase("size overflowing Int", Raw.chunked("8000000000000000\r\nhello\r\n0\r\n\r\n"), 400),
        RawCase("trailer with space before colon", Raw.chunked("0\r\nX-A : 1\r\n\r\n"), 400),
        RawCase("folded trailer", Raw.chunked("0\r\nX-A: 1\r\n 2\r\n\r\n"), 400),
        RawCase("trailer without colon", Raw.chunked("0\r\nX-A\r\n\r\n"), 400),
        RawCase("NUL in trailer value", Raw.chunked("0\r\nX-A: 1\u{0}\r\n\r\n"), 400),
        RawCase("non-ASCII trailer name", Raw.chunked("0\r\nX-\u{E9}: 1\r\n\r\n"), 400),
    ]

    @Test("A malformed chunked body is rejected with its status", arguments: rejected)
    func rejectsMalformedChunkedBody(_ rawCase: RawCase) {
        let outcome = ParserFeeder.outcome(rawCase.bytes)
        #expect(outcome.status == rawCase.status, "\(outcome.error?.message ?? "no error")")
        // The head was valid and was delivered; the body never completes.
        #expect(outcome.pendingHead?.framing == .chunked)
        #expect(outcome.requests.isEmpty)
    }

    @Test(
        "Forbidden trailer fields never reach the head",
        arguments: [
            "Content-Length: 99", "Transfer-Encoding: chunked", "Host: evil.example", "Authorization: Bearer stolen",
        ])
    func discardsForbiddenTrailer(_ trailer: String) throws {
        let text = Raw.chunked("5\r\nhello\r\n0\r\n\(trailer)\r\n\r\n") + Raw.get("/after")
        let outcome = ParserFeeder.outcome(text)
        #expect(outcome.error == nil)
        #expect(outcome.requests.map(\.path) == ["/submit", "/after"])
        let request = try #require(outcome.requests.first)
        #expect(request.bodyText == "hello")
        #expect(
            request.fields == [
                TestField(name: "Host", value: "example.com"), TestField(name: "Transfer-Encoding", value: "chunked"),
            ])
    }

    @Test func decodedBodyOverTheLimitIs413() {
        let limits = HTTPParserLimits(maxBodyBytes: 8)
        let fits = ParserFeeder.outcome(Raw.chunked("4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n"), limits: limits)
        #expect(fits.requests.first?.bodyText == "abcdefgh")
        let over = ParserFeeder.outcome(Raw.chunked("4\r\nabcd\r\n5\r\nefghi\r\n0\r\n\r\n"), limits: limits)
        #expect(over.status == 413)
    }

    @Test func hugeChunkSizeIs413BeforeAnyDataArrives() {
        let outcome = ParserFeeder.outcome(Raw.chunked("FFFFFFFF\r\n"))
        #expect(outcome.status == 413)
        #expect(outcome.pendingHead?.framing == .chunked)
    }

    @Test func oneHugeExtensionHitsTheMetadataBudget() {
        let text = Raw.chunked("1;x=" + String(repeating: "a", count: 64 * 1024) + "\r\nz\r\n0\r\n\r\n")
        let pieces = stride(from: 0, to: text.utf8.count, by: 1024).map { Array(text.utf8).dropFirst($0).prefix(1024) }
        let (outcome, fed) = ParserFeeder.feed(pieces)
        #expect(outcome.status == 413)
        #expect(fed < text.utf8.count / 2, "the budget must stop the flood early, not at the end")
    }

    @Test func manyTinyChunksWithBigExtensionsHitTheMetadataBudget() {
        let extensionText = ";e=" + String(repeating: "x", count: 4096)
        let oneChunk = "1\(extensionText)\r\nz\r\n"
        let text = Raw.chunked(String(repeating: oneChunk, count: 64) + "0\r\n\r\n")
        let pieces = stride(from: 0, to: text.utf8.count, by: 4096).map { Array(text.utf8).dropFirst($0).prefix(4096) }
        let (outcome, fed) = ParserFeeder.feed(pieces)
        #expect(outcome.status == 413)
        #expect(fed < text.utf8.count / 2)
    }

    @Test func metadataWithinTheBudgetIsAccepted() {
        let limits = HTTPParserLimits(maxChunkMetadataBytes: 12)
        // "3;a=b\r\n" (7) + "0\r\n" (3) + "\r\n" (2) = 12 bytes of metadata.
        let exact = ParserFeeder.outcome(Raw.chunked("3;a=b\r\nabc\r\n0\r\n\r\n"), limits: limits)
        #expect(exact.requests.first?.bodyText == "abc")
        let over = ParserFeeder.outcome(Raw.chunked("3;a=bc\r\nabc\r\n0\r\n\r\n"), limits: limits)
        #expect(over.status == 413)
    }
}
