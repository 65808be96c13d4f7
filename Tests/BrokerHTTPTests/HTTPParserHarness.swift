import BrokerHTTP
import Testing

/// One header field of a parsed request, comparable in tests.
struct TestField: Equatable, Sendable, CustomStringConvertible {
    let name: String
    let value: String
    var description: String { "\(name): \(value)" }
}

/// A request as a server would see it: its head and its body, comparable in tests.
struct ParsedRequest: Equatable, Sendable {
    var method: HTTPMethod
    var target: String
    var path: String
    var query: String?
    var version: HTTPVersion
    var fields: [TestField]
    var keepAlive: Bool
    var expectContinue: Bool
    var framing: HTTPRequestHead.BodyFraming
    var body: [UInt8]

    /// Snapshots `head` together with the body that followed it.
    init(_ head: HTTPRequestHead, body: [UInt8]) {
        method = head.method
        target = head.target
        path = head.path
        query = head.query
        version = head.version
        fields = head.headers.fields.map { TestField(name: $0.name, value: $0.value) }
        keepAlive = head.keepAlive
        expectContinue = head.expectContinue
        framing = head.framing
        self.body = body
    }

    /// The body as text, for readable expectations.
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// Everything a server observes while feeding bytes to a fresh parser.
struct FeedOutcome: Equatable, Sendable {
    /// Requests completed with `.head` then `.end`, in order.
    var requests: [ParsedRequest] = []
    /// A request whose `.head` came but whose `.end` did not (yet).
    var pendingHead: ParsedRequest?
    /// The error, if the parser failed.
    var error: HTTPParseError?
    /// Bytes left unconsumed after the last byte was fed; nil after an error (it depends on the split).
    var unconsumed: Int?
    /// Whether the parser said it was idle after the last byte was fed.
    var idleAtEnd = false

    /// The status code of the error, if any.
    var status: Int? { error?.status.code }
}

/// Feeds raw requests to a parser exactly as the socket server does: buffer, parse, drop, loop.
enum ParserFeeder {
    /// Feeds `pieces` one after the other; stops feeding at the first error.
    /// Returns the outcome and how many bytes had been fed when it ended.
    /// With `streaming`, every body is read as a streaming route reads it (deferred, then handed out in
    /// `.bodyPart` pieces that are joined here), under the same limit; the outcome must not differ.
    static func feed(
        _ pieces: [ArraySlice<UInt8>], limits: HTTPParserLimits = HTTPParserLimits(), streaming: Bool = false
    ) -> (outcome: FeedOutcome, fed: Int) {
        var parser = HTTPParser(limits: limits)
        parser.defersBody = streaming
        var outcome = FeedOutcome()
        var buffer: [UInt8] = []
        var head: HTTPRequestHead?
        var streamed: [UInt8] = []
        var fed = 0
        for piece in pieces {
            buffer.append(contentsOf: piece)
            fed += piece.count
            while true {
                let (event, consumed) = buffer.withUnsafeBytes { parser.parse($0) }
                #expect(consumed >= 0 && consumed <= buffer.count, "consumed \(consumed) of \(buffer.count)")
                buffer.removeFirst(min(max(consumed, 0), buffer.count))
                switch event {
                case .needMore:
                    break
                case .head(let h):
                    #expect(head == nil, "two heads without an end")
                    #expect(!parser.isIdle)
                    head = h
                    if streaming, let error = parser.startBody(limit: limits.maxBodyBytes, streaming: true) {
                        // As without streaming, where the head is refused before it is handed out.
                        outcome.error = error
                        return (outcome, fed)
                    }
                    continue
                case .bodyPart(let part):
                    #expect(streaming && !part.isEmpty, "a body part from a parser that does not stream")
                    streamed += part
                    continue
                case .end(let body):
                    guard let h = head else {
                        Issue.record("end without a head")
                        return (outcome, fed)
                    }
                    #expect(!streaming || body.isEmpty, "a streamed body handed out whole")
                    outcome.requests.append(ParsedRequest(h, body: streaming ? streamed : body))
                    streamed = []
                    head = nil
                    continue
                case .error(let error):
                    outcome.error = error
                    outcome.pendingHead = head.map { ParsedRequest($0, body: []) }
                    let again = buffer.withUnsafeBytes { parser.parse($0) }
                    if case .error(let repeated) = again.event {
                        #expect(repeated == error && again.consumed == 0, "a failed parser must stay failed")
                    } else {
                        Issue.record("a failed parser returned \(again.event)")
                    }
                    return (outcome, fed)
                }
                break
            }
        }
        outcome.pendingHead = head.map { ParsedRequest($0, body: []) }
        outcome.unconsumed = buffer.count
        outcome.idleAtEnd = parser.isIdle
        return (outcome, fed)
    }

    /// Every way of delivering `bytes` the tests compare: whole, in two pieces at
    /// every split point, and one byte at a time.
    static func deliveries(of bytes: [UInt8]) -> [(name: String, pieces: [ArraySlice<UInt8>])] {
        var result: [(String, [ArraySlice<UInt8>])] = [("whole", [bytes[...]])]
        if bytes.count > 1 {
            for split in 1..<bytes.count {
                result.append(("split at \(split)", [bytes[..<split], bytes[split...]]))
            }
            result.append(("byte by byte", bytes.indices.map { bytes[$0...$0] }))
        }
        return result
    }

    /// Feeds `bytes` in every delivery, records an issue for any that differs from
    /// the whole delivery, and returns the whole delivery's outcome.
    static func outcome(
        _ bytes: [UInt8], limits: HTTPParserLimits = HTTPParserLimits(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> FeedOutcome {
        let deliveries = deliveries(of: bytes)
        let reference = feed(deliveries[0].pieces, limits: limits).outcome
        for delivery in deliveries.dropFirst() {
            let other = feed(delivery.pieces, limits: limits).outcome
            if other != reference {
                Issue.record("\(delivery.name): \(other) differs from whole: \(reference)", sourceLocation: sourceLocation)
                break
            }
        }
        // A streaming route's parser must frame every delivery the same way.
        for delivery in deliveries {
            let streamed = feed(delivery.pieces, limits: limits, streaming: true).outcome
            if streamed != reference {
                Issue.record(
                    "\(delivery.name), streamed: \(streamed) differs from whole: \(reference)", sourceLocation: sourceLocation)
                break
            }
        }
        return reference
    }

    /// `outcome(_:)` for a request written as text (`\r\n` spelled out).
    static func outcome(
        _ text: String, limits: HTTPParserLimits = HTTPParserLimits(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> FeedOutcome {
        outcome(Array(text.utf8), limits: limits, sourceLocation: sourceLocation)
    }
}

/// A named raw request and the status it must earn (nil: accepted as one complete request).
struct RawCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let status: Int?

    /// A case from text; the name is what the test report shows.
    init(_ name: String, _ text: String, _ status: Int? = nil) {
        self.init(name, Array(text.utf8), status)
    }

    /// A case from raw bytes.
    init(_ name: String, _ bytes: [UInt8], _ status: Int? = nil) {
        self.name = name
        self.bytes = bytes
        self.status = status
    }

    var testDescription: String { status.map { "\(name) → \($0)" } ?? "\(name) → accepted" }

    /// Feeds the case in every delivery and checks the verdict: one whole request, or the status with no request.
    func check(limits: HTTPParserLimits = HTTPParserLimits(), sourceLocation: SourceLocation = #_sourceLocation) {
        let outcome = ParserFeeder.outcome(bytes, limits: limits, sourceLocation: sourceLocation)
        if let status {
            #expect(outcome.status == status, "\(outcome.error?.message ?? "no error")", sourceLocation: sourceLocation)
            #expect(outcome.requests.isEmpty && outcome.pendingHead == nil, sourceLocation: sourceLocation)
        } else {
            #expect(outcome.error == nil, "\(outcome.error?.message ?? "")", sourceLocation: sourceLocation)
            #expect(outcome.requests.count == 1, sourceLocation: sourceLocation)
            #expect(outcome.unconsumed == 0 && outcome.idleAtEnd, sourceLocation: sourceLocation)
        }
    }
}

/// Raw request text builders for the tests.
enum Raw {
    /// `GET <target> HTTP/1.1` with Host and the extra header lines, ending the head.
    static func get(_ target: String = "/", _ headerLines: [String] = []) -> String {
        "GET \(target) HTTP/1.1\r\nHost: example.com\r\n" + headerLines.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    /// A POST with Host, the extra header lines and the raw body after the head.
    static func post(_ headerLines: [String], body: String = "") -> String {
        "POST /submit HTTP/1.1\r\nHost: example.com\r\n" + headerLines.map { $0 + "\r\n" }.joined() + "\r\n" + body
    }

    /// A chunked POST whose body is `chunkedBody` exactly as written.
    static func chunked(_ chunkedBody: String) -> String {
        post(["Transfer-Encoding: chunked"], body: chunkedBody)
    }
}
