import BrokerHTTP
import Testing

/// What a client sees while feeding an answer to a fresh response parser.
struct ResponseOutcome: Equatable, CustomStringConvertible {
    var status: Int?
    var fields: [String] = []
    var framing: HTTPResponseHead.BodyFraming?
    var keepAlive: Bool?
    var body: [UInt8] = []
    var ended = false
    var error: String?
    var unconsumed = 0

    var bodyText: String { String(decoding: body, as: UTF8.self) }
    var description: String {
        "status \(status.map(String.init) ?? "-") framing \(framing.map { "\($0)" } ?? "-") body \(body.count) ended \(ended) error \(error ?? "-")"
    }
}

/// Feeds answers to ``HTTPResponseParser`` the way a client connection does: buffer, parse, drop, loop.
enum ResponseFeeder {
    static func feed(_ pieces: [ArraySlice<UInt8>], head: Bool, closeAtEnd: Bool, limits: HTTPParserLimits) -> ResponseOutcome {
        var parser = HTTPResponseParser(limits: limits)
        parser.begin(headRequest: head)
        var outcome = ResponseOutcome()
        var buffer: [UInt8] = []
        let total = pieces.reduce(0) { $0 + $1.count }
        var dropped = 0
        func run() -> Bool {
            while true {
                let (event, consumed) = buffer.withUnsafeBytes { parser.parse($0) }
                switch event {
                case .needMore:
                    buffer.removeFirst(consumed)
                    dropped += consumed
                    return true
                case .head(let status):
                    outcome.status = status
                    outcome.fields = parser.head?.headers.fields.map { "\($0.name): \($0.value)" } ?? []
                    outcome.framing = parser.head?.framing
                    outcome.keepAlive = parser.head?.keepAlive
                case .body(let range):
                    outcome.body.append(contentsOf: buffer[range])
                case .end:
                    outcome.ended = true
                    // Whatever follows the answer, fed yet or not, is left for the connection to judge.
                    outcome.unconsumed = total - dropped - consumed
                    return false
                case .error(let error):
                    outcome.error = error.code
                    return false
                }
                buffer.removeFirst(consumed)
                dropped += consumed
            }
        }
        for piece in pieces {
            buffer.append(contentsOf: piece)
            guard run() else { return outcome }
        }
        outcome.unconsumed = buffer.count
        if closeAtEnd {
            switch parser.finish() {
            case .end: outcome.ended = true
            case .error(let error): outcome.error = error.code
            default: break
            }
        }
        return outcome
    }

    /// The outcome of `text` fed whole; every other delivery (two pieces at each split, byte by byte) must agree.
    static func outcome(
        _ text: String, head: Bool = false, closeAtEnd: Bool = false, limits: HTTPParserLimits = HTTPParserLimits(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> ResponseOutcome {
        let bytes = Array(text.utf8)
        let reference = feed([bytes[...]], head: head, closeAtEnd: closeAtEnd, limits: limits)
        var deliveries: [[ArraySlice<UInt8>]] = bytes.indices.dropFirst().map { [bytes[..<$0], bytes[$0...]] }
        deliveries.append(bytes.indices.map { bytes[$0...$0] })
        for pieces in deliveries {
            let other = feed(pieces, head: head, closeAtEnd: closeAtEnd, limits: limits)
            if other != reference {
                Issue.record("\(pieces.count) pieces: \(other) differs from whole: \(reference)", sourceLocation: sourceLocation)
                break
            }
        }
        return reference
    }
}

/// RFC 9112 §4 and §6.3: the response mode of the parser, strict like the request side.
struct HTTPResponseParserTests {
    @Test func contentLengthBodyEndsAtTheLength() {
        let o = ResponseFeeder.outcome("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello")
        #expect(o.status == 200 && o.framing == .length(5) && o.keepAlive == true)
        #expect(o.bodyText == "hello" && o.ended && o.unconsumed == 0)
        #expect(o.fields == ["Content-Type: text/plain", "Content-Length: 5"])
    }

    @Test func bytesAfterTheBodyAreLeftUnconsumed() {
        let o = ResponseFeeder.outcome("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA")
        #expect(o.bodyText == "ok" && o.ended && o.unconsumed == 5)
    }

    @Test func chunkedBodyIsDecoded() {
        let o = ResponseFeeder.outcome(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n")
        #expect(o.framing == .chunked && o.bodyText == "hello world" && o.ended && o.error == nil)
    }

    @Test func bodyWithoutLengthRunsUntilClose() {
        let o = ResponseFeeder.outcome("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nto the end", closeAtEnd: true)
        #expect(o.framing == .untilClose && o.keepAlive == false && o.bodyText == "to the end" && o.ended)
    }

    @Test("RFC 9112 §6.3 item 1: no body for HEAD, 204 and 304, whatever the fields say")
    func bodilessAnswers() {
        let head = ResponseFeeder.outcome("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", head: true)
        #expect(head.framing == HTTPResponseHead.BodyFraming.none && head.ended && head.body.isEmpty)
        let noContent = ResponseFeeder.outcome("HTTP/1.1 204 No Content\r\n\r\n")
        #expect(noContent.status == 204 && noContent.ended && noContent.keepAlive == true)
        let notModified = ResponseFeeder.outcome("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n")
        #expect(notModified.ended && notModified.body.isEmpty)
    }

    @Test("RFC 9110 §15.2: interim answers are skipped")
    func interimAnswersAreSkipped() {
        let o = ResponseFeeder.outcome(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}"
        )
        #expect(o.status == 201 && o.bodyText == "{}" && o.ended)
        #expect(o.fields == ["Content-Length: 2"])
    }

    @Test func keepAliveFollowsTheVersionAndConnection() {
        #expect(ResponseFeeder.outcome("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").keepAlive == false)
        #expect(ResponseFeeder.outcome("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").keepAlive == false)
        #expect(ResponseFeeder.outcome("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").keepAlive == true)
    }

    @Test func statusLineWithoutReasonIsAccepted() {
        let o = ResponseFeeder.outcome("HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n")
        #expect(o.status == 404 && o.ended)
    }

    static let hostile: [(name: String, text: String)] = [
        ("Content-Length and Transfer-Encoding", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("two Content-Lengths", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"),
        ("Content-Length list", "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello"),
        ("signed Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello"),
        ("gzip transfer coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx"),
        ("chunked not last", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nxx"),
        ("Transfer-Encoding in 1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("hex prefix chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n"),
        ("negative chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nx\r\n0\r\n\r\n"),
        ("oversized chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111\r\nx\r\n0\r\n\r\n"),
        ("chunk data too long", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n"),
        ("obs-fold", "HTTP/1.1 200 OK\r\nX-A: 1\r\n  continued\r\nContent-Length: 0\r\n\r\n"),
        ("space before colon", "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n"),
        ("bare LF in the head", "HTTP/1.1 200 OK\nContent-Length: 0\n\n"),
        ("bare LF status line", "HTTP/1.1 200 OK\n\r\n"),
        ("lowercase version", "http/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
        ("HTTP/2 status line", "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n"),
        ("two-digit status", "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n"),
        ("status 600", "HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n"),
        ("NUL in reason", "HTTP/1.1 200 O\u{0}K\r\nContent-Length: 0\r\n\r\n"),
        ("protocol switch", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"),
        ("not HTTP", "SSH-2.0-OpenSSH_9.2\r\n\r\n"),
    ]

    @Test("Hostile framing is refused as a bad response", arguments: hostile)
    func hostileFramingIsRefused(_ sample: (name: String, text: String)) {
        let o = ResponseFeeder.outcome(sample.text)
        #expect(o.error == "bad_response", "\(sample.name): \(o)")
    }

    @Test func oversizedHeadIsRefused() {
        let big = "HTTP/1.1 200 OK\r\nX-Big: " + String(repeating: "a", count: 40000) + "\r\nContent-Length: 0\r\n\r\n"
        #expect(ResponseFeeder.outcome(big).error == "bad_response")
        let many = "HTTP/1.1 200 OK\r\n" + (0..<150).map { "X-\($0): v\r\n" }.joined() + "\r\n"
        #expect(ResponseFeeder.outcome(many).error == "bad_response")
        let longStatus = "HTTP/1.1 200 " + String(repeating: "r", count: 9000) + "\r\n\r\n"
        #expect(ResponseFeeder.outcome(longStatus).error == "bad_response")
    }

    @Test func truncatedBodiesFailAtClose() {
        #expect(ResponseFeeder.outcome("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf", closeAtEnd: true).error == "bad_response")
        #expect(
            ResponseFeeder.outcome("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", closeAtEnd: true).error
                == "bad_response")
        #expect(ResponseFeeder.outcome("HTTP/1.1 200 OK\r\nContent-Le", closeAtEnd: true).error == "bad_response")
    }

    @Test func manyChunksAreNotAnExtensionFlood() {
        var text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        for _ in 0..<20000 { text += "1\r\nx\r\n" }
        text += "0\r\n\r\n"
        let bytes = Array(text.utf8)
        let o = ResponseFeeder.feed([bytes[...]], head: false, closeAtEnd: false, limits: HTTPParserLimits())
        #expect(o.error == nil && o.body.count == 20000 && o.ended)
        let flood = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "e", count: 20000) + "\r\nx\r\n0\r\n\r\n"
        let refused = Array(flood.utf8)
        #expect(ResponseFeeder.feed([refused[...]], head: false, closeAtEnd: false, limits: HTTPParserLimits()).error == "bad_response")
    }

    @Test func bytesWhenNoAnswerIsDueAreAnError() {
        var parser = HTTPResponseParser()
        let bytes: [UInt8] = Array("HTTP/1.1 200 OK\r\n\r\n".utf8)
        let (event, _) = bytes.withUnsafeBytes { parser.parse($0) }
        guard case .error(let error) = event else {
            Issue.record("expected an error, got \(event)")
            return
        }
        #expect(error.code == "bad_response")
    }
}
