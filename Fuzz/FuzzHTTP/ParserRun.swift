import BrokerHTTP
import FuzzSupport

/// Feeds one input to a fresh parser the way the server does (buffer, parse, drop what was consumed, loop),
/// delivered in pieces, and checks every event against the parser's contract as it goes.
struct ParserRun {
    /// The whole input.
    let input: [UInt8]
    /// The limits the parser enforces.
    let limits: HTTPParserLimits
    /// The parser under test.
    var parser: HTTPParser
    /// Bytes received and not yet consumed, as the connection keeps them.
    var pending: [UInt8] = []
    /// How many input bytes have been delivered.
    var received = 0
    /// How many input bytes the parser has consumed.
    var consumedTotal = 0
    /// The head of the request whose body is being read.
    var head: HTTPRequestHead?
    /// Where the current request began.
    var requestStart = 0
    /// Where the current request's head ended.
    var headEnd = 0
    /// The complete requests so far.
    var requests: [FramedRequest] = []
    /// The error, once the parser failed.
    var failure: (error: HTTPParseError, at: Int)?

    /// Delivers `input` cut at the offsets in `cuts` (ascending, inside the input) and returns what the parser made of it.
    static func deliver(_ input: [UInt8], cuts: [Int], limits: HTTPParserLimits) -> RunOutcome {
        var run = ParserRun(input: input, limits: limits, parser: HTTPParser(limits: limits))
        for cut in cuts where cut > run.received && cut < input.count { run.receive(upTo: cut) }
        run.receive(upTo: input.count)
        return run.outcome()
    }

    /// Appends the input up to `end` to the pending bytes and parses until the parser needs more.
    mutating func receive(upTo end: Int) {
        guard failure == nil else { return }
        pending.append(contentsOf: input[received..<end])
        received = end
        var eventsWithoutProgress = 0
        while true {
            let (event, consumed) = pending.withUnsafeBytes { parser.parse($0) }
            require(consumed >= 0 && consumed <= pending.count, "consumed \(consumed) of \(pending.count) pending bytes")
            pending.removeFirst(consumed)
            consumedTotal += consumed
            // Only `.end` of an empty body may follow `.head` without consuming; anything more is a loop.
            eventsWithoutProgress = consumed == 0 ? eventsWithoutProgress + 1 : 0
            require(eventsWithoutProgress <= 1 || event.isNeedMore || event.isError, "events without progress")
            switch event {
            case .needMore:
                let again = pending.withUnsafeBytes { parser.parse($0) }
                require(again.event.isNeedMore && again.consumed == 0, "needMore is not stable without new bytes")
                return
            case .head(let h):
                require(head == nil, "two heads without an end")
                require(consumed > 0, "a head that consumed nothing")
                require(!parser.isIdle, "idle right after a head")
                headEnd = consumedTotal
                checkHead(h)
                head = h
            case .bodyPart:
                require(false, "a body part from a parser that does not stream")
            case .end(let body):
                guard let h = head else { fatalError("fuzz invariant broken: end without a head") }
                require(parser.isIdle, "not idle right after an end")
                let request = FramedRequest(
                    method: h.method, target: h.target, version: h.version, keepAlive: h.keepAlive,
                    framing: h.framing, body: body, start: requestStart, headEnd: headEnd, end: consumedTotal)
                checkBody(request)
                requests.append(request)
                head = nil
                requestStart = consumedTotal
            case .error(let error):
                let again = pending.withUnsafeBytes { parser.parse($0) }
                require(again.consumed == 0, "a failed parser consumed bytes")
                if case .error(let repeated) = again.event {
                    require(repeated == error, "a failed parser changed its error")
                } else {
                    fatalError("fuzz invariant broken: a failed parser returned another event")
                }
                require(!parser.isIdle, "a failed parser says it is idle")
                failure = (error, requestStart)
                return
            }
        }
    }

    /// The requests and how the input ended.
    func outcome() -> RunOutcome {
        let ending: RunEnding
        if let failure {
            ending = .failed(failure.error, at: failure.at)
        } else if pending.isEmpty && head == nil && parser.isIdle {
            ending = .idle
        } else {
            ending = .partial(headSeen: head != nil, unconsumed: pending.count)
        }
        return RunOutcome(requests: requests, ending: ending)
    }
}

extension HTTPParser.Event {
    /// Whether this is `.needMore`.
    var isNeedMore: Bool {
        if case .needMore = self { return true }
        return false
    }

    /// Whether this is `.error`.
    var isError: Bool {
        if case .error = self { return true }
        return false
    }
}
