import BrokerHTTP
import Testing

/// Size limits enforced on the bytes received so far, however they are split (catalogue 14–16, 18).
struct HTTPParserLimitsTests {
    /// `text` in pieces of `size` bytes.
    static func pieces(_ text: String, size: Int) -> [ArraySlice<UInt8>] {
        let bytes = Array(text.utf8)
        return stride(from: 0, to: bytes.count, by: size).map { bytes[$0..<min($0 + size, bytes.count)] }
    }

    @Test func acceptsA7900ByteTarget() throws {
        let target = "/" + String(repeating: "a", count: 7_899)
        let outcome = ParserFeeder.feed(Self.pieces(Raw.get(target), size: 1)).outcome
        #expect(outcome.requests.first?.target == target)
        #expect(ParserFeeder.feed(Self.pieces(Raw.get(target), size: 1000)).outcome == outcome)
    }

    @Test("A 100 KB target is 414 as soon as the limit is passed", arguments: [1024, 100_000])
    func rejectsA100KBTarget(pieceSize: Int) {
        let text = Raw.get("/" + String(repeating: "a", count: 100_000))
        let (outcome, fed) = ParserFeeder.feed(Self.pieces(text, size: pieceSize))
        #expect(outcome.status == 414)
        if pieceSize == 1024 { #expect(fed <= 8192 + 2048) }
    }

    @Test func targetLimitIsExactOnEverySplit() {
        let limits = HTTPParserLimits(maxTargetBytes: 16)
        let fits = ParserFeeder.outcome(Raw.get("/" + String(repeating: "t", count: 15)), limits: limits)
        #expect(fits.requests.count == 1)
        let over = ParserFeeder.outcome(Raw.get("/" + String(repeating: "t", count: 16)), limits: limits)
        #expect(over.status == 414)
    }

    @Test("A 100 KB header is 431 before all of it is fed (hyper #4081 regression)", arguments: [1, 1024, 100_000])
    func rejectsA100KBHeader(pieceSize: Int) {
        let text = Raw.get("/", ["X-Big: " + String(repeating: "b", count: 100_000)])
        let pieces =
            pieceSize == 1
            ? Self.pieces(String(text.prefix(40_000)), size: 1)
            : Self.pieces(text, size: pieceSize)
        let (outcome, fed) = ParserFeeder.feed(pieces)
        #expect(outcome.status == 431)
        if pieceSize < 100_000 {
            // Default limit 32 KiB: the error comes within one piece of passing it.
            #expect(fed <= 32_768 + 64 + pieceSize)
        }
    }

    @Test func rejectsThreeThousandSmallHeaders() {
        let lines = (0..<3_000).map { "X-H\($0): v" }
        let (outcome, fed) = ParserFeeder.feed(Self.pieces(Raw.get("/", lines), size: 512))
        #expect(outcome.status == 431)
        #expect(fed < 4_096, "the count limit stops reading long before the end")
    }

    @Test func headerCountLimitIsExact() {
        let limits = HTTPParserLimits(maxHeaderCount: 5)
        let five = ParserFeeder.outcome(Raw.get("/", (1...4).map { "X-\($0): v" }), limits: limits)
        #expect(five.requests.first?.fields.count == 5)
        let six = ParserFeeder.outcome(Raw.get("/", (1...5).map { "X-\($0): v" }), limits: limits)
        #expect(six.status == 431)
    }

    @Test func headerBytesLimitIsExactOnEverySplit() {
        // "Host: example.com\r\n" (19) + "X: " + value + "\r\n" + "\r\n" (2) = 26 + value bytes.
        let limits = HTTPParserLimits(maxHeaderBytes: 40)
        let fits = ParserFeeder.outcome(Raw.get("/", ["X: " + String(repeating: "v", count: 14)]), limits: limits)
        #expect(fits.requests.count == 1)
        let over = ParserFeeder.outcome(Raw.get("/", ["X: " + String(repeating: "v", count: 15)]), limits: limits)
        #expect(over.status == 431)
    }

    @Test func totalJustOverTheDefaultLimitIs431() {
        // 33 fields of ~1 KiB: well under 100 fields, just over 32 KiB in total.
        let lines = (0..<33).map { "X-F\($0): " + String(repeating: "f", count: 1_000) }
        #expect(ParserFeeder.feed(Self.pieces(Raw.get("/", lines), size: 777)).outcome.status == 431)
        let under = (0..<31).map { "X-F\($0): " + String(repeating: "f", count: 1_000) }
        #expect(ParserFeeder.feed(Self.pieces(Raw.get("/", under), size: 777)).outcome.requests.count == 1)
    }

    @Test func hugeContentLengthIs413WithNoBodyBytes() {
        let (outcome, _) = ParserFeeder.feed([Array(Raw.post(["Content-Length: 999999999"]).utf8)[...]])
        #expect(outcome.status == 413)
        #expect(outcome.pendingHead == nil, "413 comes before .head, so no body is ever read")
    }

    @Test func contentLengthAtTheLimitIsAccepted() {
        let limits = HTTPParserLimits(maxBodyBytes: 5)
        #expect(
            ParserFeeder.outcome(Raw.post(["Content-Length: 5"], body: "hello"), limits: limits)
                .requests.first?.bodyText == "hello")
        #expect(ParserFeeder.outcome(Raw.post(["Content-Length: 6"], body: "hello!"), limits: limits).status == 413)
    }

    @Test func tooLargeBodyWinsOverExpectContinue() {
        let outcome = ParserFeeder.outcome(Raw.post(["Expect: 100-continue", "Content-Length: 999999999"]))
        #expect(outcome.status == 413)
    }

    @Test func hundredKilobyteMethodIs501Early() {
        let text = String(repeating: "M", count: 100_000) + " / HTTP/1.1\r\nHost: a\r\n\r\n"
        let (outcome, fed) = ParserFeeder.feed(Self.pieces(text, size: 1024))
        #expect(outcome.status == 501)
        #expect(fed == 1024)
    }
}
