/// A pure HTTP/1.1 request parser (RFC 9112): bytes in, events out, no I/O.
///
/// The caller keeps every byte it received and has not yet seen consumed, calls
/// `parse` with them, drops `consumed` bytes from the front and calls again while
/// the event is not `.needMore`. Each request yields `.head` and then `.end`; an
/// `.error` is final. While the head is incomplete nothing is consumed, but the
/// parser remembers how far it scanned: every byte is examined once, and every
/// limit holds on the bytes received so far, however they were split.
///
/// With `defersBody` set, a head announcing a body leaves the parser waiting for
/// ``startBody(limit:streaming:)``, so the caller can choose the body's limit and
/// whether it is handed out in `.bodyPart` pieces (a streaming route) or whole.
public struct HTTPParser: Sendable {
    /// What one call to `parse` found.
    public enum Event: Sendable {
        /// More bytes are needed before anything else can be said.
        case needMore
        /// The request line and headers are complete and valid.
        case head(HTTPRequestHead)
        /// Decoded body bytes of a streamed body (``startBody(limit:streaming:)``), in order; never empty.
        case bodyPart([UInt8])
        /// The body is complete (empty when there is none, or when it was streamed); the parser is ready for the next request.
        case end(body: [UInt8])
        /// The request is malformed; answer `error.status` and close. The parser stays failed.
        case error(HTTPParseError)
    }

    /// Where the parser is in the current request; the detail of each phase lives in `scan` or `chunk`.
    ///
    /// Legal transitions: `head → emptyBody | fixedBody | chunkedBody | bodyPending`,
    /// `bodyPending → fixedBody | chunkedBody`, each body state `→ head` after `.end`,
    /// and any state `→ failed`, which is terminal.
    enum State: Sendable {
        /// Scanning the request line and header section; progress is in `scan`.
        case head
        /// `.head` was returned for a request with a body and `defersBody` is set: nothing is parsed until
        /// ``startBody(limit:streaming:)`` says how to read it.
        case bodyPending(HTTPRequestHead.BodyFraming)
        /// `.head` was returned for a request without a body; `.end` comes next.
        case emptyBody
        /// Reading a Content-Length body of which this many bytes are still due.
        case fixedBody(remaining: Int)
        /// Reading a chunked body; progress is in `chunk`.
        case chunkedBody
        /// A request was malformed; every later call returns this error.
        case failed(HTTPParseError)
    }

    /// The limits in force.
    public let limits: HTTPParserLimits
    /// The current state.
    var state: State = .head
    /// Progress through the current request head.
    var scan = HeadScan()
    /// The long names and values of this connection's previous request, which the next one may take again.
    var kept = KeptStrings()
    /// Progress through the current chunked body.
    var chunk = ChunkScan()
    /// The body bytes decoded so far for the current request (none kept when it is streamed).
    var body: [UInt8] = []
    /// Whether a head announcing a body waits for ``startBody(limit:streaming:)``; set by a server with streaming routes.
    public var defersBody = false
    /// The current body's limit: `limits.maxBodyBytes`, or what ``startBody(limit:streaming:)`` chose.
    var bodyLimit: Int
    /// Whether the current body is handed out in `.bodyPart` pieces.
    var streamsBody = false
    /// Body bytes handed out so far when streaming (the chunked limit counts them).
    var streamedCount = 0

    /// Creates a parser waiting for the first byte of a request.
    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        self.limits = limits
        bodyLimit = limits.maxBodyBytes
    }

    /// Starts reading the body a deferred head announced, at most `limit` bytes (a larger Content-Length fails at
    /// once with 413, RFC 9110 §15.5.14), whole or in `.bodyPart` pieces. Returns the error when it failed; does
    /// nothing unless a head is waiting.
    public mutating func startBody(limit: Int, streaming: Bool) -> HTTPParseError? {
        guard case .bodyPending(let framing) = state else { return nil }
        bodyLimit = limit
        streamsBody = streaming
        streamedCount = 0
        if case .length(let size) = framing, size > limit {
            _ = fail(.contentTooLarge)
            return .contentTooLarge
        }
        enterBody(framing)
        return nil
    }

    /// Moves into the state that reads a body framed by `framing`.
    mutating func enterBody(_ framing: HTTPRequestHead.BodyFraming) {
        switch framing {
        case .none, .length(0):
            state = .emptyBody
        case .length(let size):
            // Reserve a bounded amount: an announced size is only a claim.
            if !streamsBody { body.reserveCapacity(min(size, 64 * 1024)) }
            state = .fixedBody(remaining: size)
        case .chunked:
            chunk = ChunkScan()
            state = .chunkedBody
        }
    }

    /// Whether no byte of the next request has been consumed or scanned yet.
    public var isIdle: Bool {
        switch state {
        case .head: return scan.pos == 0
        case .emptyBody, .fixedBody, .chunkedBody, .bodyPending, .failed: return false
        }
    }

    /// Parses from `bytes`, which begin at the first byte not consumed by earlier calls.
    /// Returns the event and how many bytes the caller must drop from the front.
    public mutating func parse(_ bytes: UnsafeRawBufferPointer) -> (event: Event, consumed: Int) {
        // Bytes have no alignment and UInt8 aliases any memory, so this binding is sound.
        let input = bytes.assumingMemoryBound(to: UInt8.self)
        switch state {
        case .head: return parseHead(input)
        case .emptyBody: return endRequest(consumed: 0)
        case .fixedBody(let remaining): return parseFixedBody(input, remaining: remaining)
        case .chunkedBody: return parseChunkedBody(input)
        case .bodyPending: return (.needMore, 0)
        case .failed(let error): return (.error(error), 0)
        }
    }

    /// Enters the terminal failed state and reports `error`.
    mutating func fail(_ error: HTTPParseError) -> (event: Event, consumed: Int) {
        state = .failed(error)
        scan = HeadScan()
        chunk = ChunkScan()
        body = []
        return (.error(error), 0)
    }

    /// Hands out the finished body and gets ready for the next request.
    mutating func endRequest(consumed: Int) -> (event: Event, consumed: Int) {
        let finished = body
        body = []
        chunk = ChunkScan()
        state = .head
        bodyLimit = limits.maxBodyBytes
        streamsBody = false
        streamedCount = 0
        return (.end(body: finished), consumed)
    }
}

/// RFC 9112 §6.2: a body delimited by Content-Length.
extension HTTPParser {
    /// Copies up to `remaining` body bytes (or hands them out as a `.bodyPart` when streaming); `.end` once all
    /// have arrived, which may be at once.
    mutating func parseFixedBody(_ b: Bytes, remaining: Int) -> (event: Event, consumed: Int) {
        let take = min(remaining, b.count)
        if streamsBody {
            guard take > 0 else { return remaining == 0 ? endRequest(consumed: 0) : (.needMore, 0) }
            state = .fixedBody(remaining: remaining - take)
            streamedCount += take
            return (.bodyPart(Array(Bytes(rebasing: b[0..<take]))), take)
        }
        if take > 0 { body.append(contentsOf: Bytes(rebasing: b[0..<take])) }
        if take == remaining { return endRequest(consumed: take) }
        state = .fixedBody(remaining: remaining - take)
        return (.needMore, take)
    }
}
