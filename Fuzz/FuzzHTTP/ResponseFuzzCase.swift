import BrokerHTTP
import FuzzSupport

/// One fuzz input read as an upstream's answer by the response mode of the parser, whole and split.
///
/// The first byte's low bit says whether the request was HEAD; the rest is the answer.
/// Each delivery checks the parser's contract event by event (consumed within what
/// was passed, body runs inside the input, a failed parser stays failed); across
/// deliveries the status, framing, body bytes and ending must not depend on the split.
struct ResponseFuzzCase {
    /// What a client made of one answer.
    struct Outcome: Equatable {
        var status: Int?
        var framing: HTTPResponseHead.BodyFraming?
        var keepAlive: Bool?
        var body: [UInt8] = []
        var ended = false
        var error: String?
    }

    /// Limits small enough that inputs of a few KiB reach every limit check.
    static let tightLimits = HTTPParserLimits(
        maxTargetBytes: 200, maxHeaderBytes: 600, maxHeaderCount: 8, maxBodyBytes: 1024, maxChunkMetadataBytes: 256)

    let bytes: [UInt8]

    /// Runs the whole delivery and split ones under default and tight limits; stops the process on a violation.
    func check() {
        guard let first = bytes.first else { return }
        let answer = Array(bytes.dropFirst())
        let head = first & 1 == 1
        for limits in [HTTPParserLimits(), Self.tightLimits] {
            let whole = Self.run(answer, cuts: [], head: head, limits: limits)
            let n = answer.count
            guard n > 1 else { continue }
            var cutSets = [[1 + Int(first) * (n - 1) / 256]]
            if n <= 384 { cutSets.append(Array(1..<n)) }
            for cuts in cutSets {
                let split = Self.run(answer, cuts: cuts, head: head, limits: limits)
                require(split == whole, "response delivery cut at \(cuts.prefix(3))… differs from the whole input")
            }
        }
    }

    /// Delivers `answer` cut at `cuts`, then ends the input, checking each event.
    static func run(_ answer: [UInt8], cuts: [Int], head: Bool, limits: HTTPParserLimits) -> Outcome {
        var parser = HTTPResponseParser(limits: limits)
        parser.begin(headRequest: head)
        var outcome = Outcome()
        var pending: [UInt8] = []
        var delivered = 0
        func drain() -> Bool {
            var steps = 0
            while true {
                steps += 1
                require(steps <= pending.count + 64, "the response parser loops without consuming")
                let (event, consumed) = pending.withUnsafeBytes { parser.parse($0) }
                require(consumed >= 0 && consumed <= pending.count, "consumed \(consumed) of \(pending.count)")
                switch event {
                case .needMore:
                    pending.removeFirst(consumed)
                    return true
                case .head(let status):
                    require(outcome.status == nil, "two final heads")
                    require((200...599).contains(status), "a final status outside 200–599")
                    outcome.status = status
                    outcome.framing = parser.head?.framing
                    outcome.keepAlive = parser.head?.keepAlive
                case .body(let range):
                    require(outcome.status != nil, "body before the head")
                    require(range.lowerBound >= 0 && range.upperBound <= consumed && !range.isEmpty, "a body run outside the input")
                    outcome.body.append(contentsOf: pending[range])
                    if case .length(let declared) = outcome.framing {
                        require(outcome.body.count <= declared, "more body than Content-Length")
                    }
                case .end:
                    require(outcome.status != nil, "end before the head")
                    outcome.ended = true
                    return false
                case .error(let error):
                    require(error.code == "bad_response", "a response error that is not bad_response")
                    let again = pending.withUnsafeBytes { parser.parse($0) }
                    if case .error = again.event {} else { require(false, "a failed response parser recovered") }
                    outcome.error = error.message
                    return false
                }
                pending.removeFirst(consumed)
            }
        }
        for end in cuts + [answer.count] where end > delivered {
            pending.append(contentsOf: answer[delivered..<end])
            delivered = end
            guard drain() else { return outcome }
        }
        switch parser.finish() {
        case .end:
            outcome.ended = true
        case .error(let error):
            outcome.error = error.message
        case .needMore, .head, .body:
            require(false, "finish returned neither end nor error")
        }
        return outcome
    }
}
