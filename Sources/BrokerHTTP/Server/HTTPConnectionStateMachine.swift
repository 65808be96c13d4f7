/// The life of one HTTP/1.1 connection as a pure state machine: events in, actions out, no I/O.
///
/// The driver (`HTTPConnection`) owns the socket, the Dispatch sources and the bytes
/// received but not yet consumed; it reports what happened (bytes arrived, a handler
/// answered, the socket took some output, the peer closed, a deadline passed, the
/// connection was chosen for eviction, the server is shutting down) with the current
/// monotonic time in nanoseconds, and does what the returned action says. The machine
/// owns the parser (its collaborator for framing), the output buffer and the one
/// deadline in force; it reads no clock, the `Date` field's value is injected too.
///
/// States and their legal transitions:
///
/// - `idle`: between requests, no byte of the next one yet; idle deadline.
///   → `readingHead` on a first byte; → `readingBody` when a whole head arrives at once;
///   → `closing` on a framing error; → `closed` at the idle deadline, on eviction, on
///   shutdown or on end of input.
/// - `readingHead`: some bytes of a head have arrived; a total header deadline runs from
///   the first byte (RFC 9112 §2.2 leaves it to us; nginx's `client_header_timeout`).
///   → `readingBody` when the head is complete; → `closing` on a framing error, at the
///   deadline (408) or on eviction (503).
/// - `readingBody`: the head is complete and its body is arriving; body deadline.
///   → `inHandler` when the body is complete; → `closing` on a framing error, a refused
///   `Expect: 100-continue`, at the deadline (408) or on eviction (503).
/// - `streamingBody`: the head is complete, a streaming route's handler already runs, and
///   its body is arriving piece by piece; the body deadline runs from the last piece (it is
///   lifted while the handler's buffer is full). → `inHandler` when the body is complete;
///   → `closing` when the handler answers first (the rest of the body is not read), on a
///   framing error, at the deadline (408) or on eviction (503).
/// - `inHandler`: a handler is running; input is not parsed, so pipelined requests are
///   answered in order, and no deadline runs. → `idle` when it answers on a keep-alive
///   connection; → `closing` when it answers and the connection must close;
///   → `streamingResponse` when its answer is a stream.
/// - `streamingResponse`: the head of a streamed answer is queued and its pieces follow as the
///   handler's source yields them; input is not parsed. → `idle` or `closing` after the last
///   piece; → `closed` when the source fails.
/// - `closing`: the last response is queued; input is discarded. → `lingering` when the
///   output is written; → `closed` on end of input or at the write deadline.
/// - `lingering`: our side is shut (FIN sent); input is drained and discarded so the peer
///   reads the response rather than a reset (nginx's lingering close). → `closed` on end of
///   input or at the linger deadline.
/// - `closed`: terminal; every event is ignored.
///
/// Writing runs beside the read states, because HTTP/1.1 pipelining lets the next request
/// arrive while earlier answers are still being sent: while the socket refuses output the
/// write deadline replaces the state's own, and more than 256 KiB unsent stops parsing
/// (back-pressure) until the socket takes it.
///
/// Arming a deadline is not an action: the machine keeps the one deadline in force in
/// `deadline`, and the driver publishes it after each event for the sweeper to poll, so
/// no event needs to return more than one action.
struct HTTPConnectionStateMachine {
    /// Where the connection is in its request cycle; see the type's documentation for transitions.
    enum State {
        /// Between requests: no byte of the next one yet.
        case idle
        /// Some bytes of a head have arrived.
        case readingHead
        /// The head is complete and the body is arriving.
        case readingBody(HTTPRequestHead)
        /// A streaming route's handler runs while the body still arrives.
        case streamingBody(HTTPRequestHead)
        /// A handler is running for this request.
        case inHandler(HTTPRequestHead)
        /// A streamed answer is being sent.
        case streamingResponse(StreamedResponse)
        /// The last response is queued; the connection closes once it is written.
        case closing
        /// Our side is shut; unread input is drained until end of input.
        case lingering
        /// The connection is closed.
        case closed
    }

    /// When the deadline in force passes, and what it means then.
    struct Deadline: Equatable, Sendable {
        /// What a deadline means when it passes.
        enum Kind: UInt8, Sendable {
            /// No deadline runs.
            case none
            /// Keep-alive idle time (RFC 9112 §9.5): close.
            case idle
            /// Total time for a request head: 408 and close.
            case header
            /// Total time for a request body: 408 and close.
            case body
            /// Time for the socket to take refused output: close.
            case write
            /// Time to drain input after our FIN: close.
            case linger
        }

        /// What the deadline means.
        var kind: Kind
        /// Monotonic nanoseconds when it passes; 0 with `.none`.
        var at: UInt64

        /// No deadline.
        static let none = Deadline(kind: .none, at: 0)

        /// The deadline as one word, so that threads reading it without the machine see a kind
        /// and a time that belong together: the time with its low three bits replaced by the kind
        /// (an 8 ns rounding nothing notices); 0 for none.
        var word: UInt64 {
            kind == .none || at == 0 ? 0 : (at & ~UInt64(7)) | UInt64(kind.rawValue)
        }

        /// The deadline a ``word`` stands for (its time rounded up to the 8 ns step, never early).
        init(word: UInt64) {
            guard word != 0, let kind = Kind(rawValue: UInt8(word & 7)), kind != .none else {
                self = .none
                return
            }
            self.init(kind: kind, at: word | 7)
        }

        init(kind: Kind, at: UInt64) {
            self.kind = kind
            self.at = at
        }
    }

    /// The time each deadline allows, in nanoseconds.
    struct Timeouts: Sendable {
        /// Total time for a head, from its first byte.
        var header: UInt64
        /// Total time for a body, from the end of its head.
        var body: UInt64
        /// Time for the socket to take output it refused.
        var write: UInt64
        /// Keep-alive idle time.
        var idle: UInt64
        /// Time to drain input after our FIN.
        var linger: UInt64

        /// The server's configured timeouts, and a two-second linger.
        init(_ c: HTTPServerConfiguration) {
            self.init(header: c.headerTimeout, body: c.bodyTimeout, write: c.writeTimeout, idle: c.idleTimeout, linger: 2)
        }

        /// Timeouts given in seconds; negative values count as zero.
        init(header: Double, body: Double, write: Double, idle: Double, linger: Double) {
            func ns(_ seconds: Double) -> UInt64 { UInt64(max(seconds, 0) * 1e9) }
            self.header = ns(header)
            self.body = ns(body)
            self.write = ns(write)
            self.idle = ns(idle)
            self.linger = ns(linger)
        }

        /// The time `kind` allows; 0 for `.none`.
        func allowed(_ kind: Deadline.Kind) -> UInt64 {
            switch kind {
            case .none: return 0
            case .idle: return idle
            case .header: return header
            case .body: return body
            case .write: return write
            case .linger: return linger
            }
        }
    }

    /// A streamed answer in progress.
    struct StreamedResponse {
        /// The request's head.
        var head: HTTPRequestHead
        /// Whether the connection closes after the answer.
        var close: Bool
        /// Whether pieces go out as chunks.
        var chunked: Bool
        /// Bytes still due under a `Content-Length`; nil when chunked or close-delimited.
        var remaining: Int?
        /// The route and status, recorded when the answer ends.
        var route: Int?
        var status: Int
    }

    /// A response the machine queued, for metrics and the access log.
    struct Completed: Sendable {
        /// The request method, or `-` when no head was parsed.
        var method: String
        /// The request path, or `-` when no head was parsed.
        var path: String
        /// The route index for metrics; nil for unmatched requests and framing errors.
        var route: Int?
        /// The status sent.
        var status: Int
        /// Seconds from the request's first byte (or the end of the previous one) to the response.
        var seconds: Double
        /// The request's id; nil when the response went out before a whole request was read.
        var requestID: String?
        /// The request's head, when one was parsed (the access log reads its fields).
        var head: HTTPRequestHead?
    }

    /// What the driver does after `parse`.
    enum ParseAction {
        /// Every usable byte is consumed; keep reading.
        case readMore
        /// Stop parsing and keep the unconsumed bytes (a handler runs, or too much output is unsent).
        case pause
        /// Drop the unconsumed bytes: the connection is closing and reads no more requests.
        case discardRest
        /// Run the route's handler (reading pauses while it waits) and report `handlerFinished`.
        case callHandler(Request)
        /// Run a streaming route's handler now with a body stream, keep reading, and report `handlerFinished`.
        case startStreaming(Request)
        /// Give these body bytes to the streaming handler, then parse again (or wait while its buffer is full).
        case bodyPart([UInt8])
        /// The streamed body is complete: end the handler's stream and stop reading until it answers.
        case bodyEnd
        /// RFC 9110 §10.1.1: decide whether the route takes this request before its body is
        /// read; report `expectationAccepted` or `expectationRefused`, then parse again.
        case checkExpectation(HTTPRequestHead)
        /// An error response was queued (a framing error): record it, then parse again.
        case responded(Completed)
    }

    /// What the driver does after a write, a deadline, an eviction or a lifecycle event.
    enum Action {
        /// Nothing.
        case none
        /// Record the response just queued (a 408 or 503), then send the unsent output.
        case write(Completed)
        /// Parse the bytes kept from before, then write what that produced.
        case parseBuffered
        /// Start read events again.
        case resumeReading
        /// Stop read events.
        case pauseReading
        /// Shut our side for writing (FIN after the last response) and keep reading to drain.
        case halfCloseAndDrain
        /// Shut our side for writing, then close (the peer already closed; the machine is closed).
        case halfCloseAndClose
        /// Close the connection.
        case close
    }

    /// Unsent output above which parsing stops until the socket takes some.
    static let backPressureLimit = 256 * 1024

    /// The current state.
    private(set) var state: State = .idle
    /// The deadline in force; the driver publishes it for the sweeper.
    private(set) var deadline: Deadline
    /// Whether the peer's end of input has been read.
    private(set) var peerClosed = false
    /// Whether the server is shutting down; every later response closes its connection.
    private(set) var draining = false
    /// The collaborator that turns bytes into requests.
    private var parser: HTTPParser
    /// Says how a body is read for a head's route; nil reads every body whole.
    private let bodyMode: (@Sendable (HTTPRequestHead) -> Router.BodyMode)?
    private let timeouts: Timeouts
    /// Encoded output; bytes before `outputOffset` are sent.
    private var output: [UInt8] = []
    private var outputOffset = 0
    /// When the current request began (its first byte, or the end of the previous response).
    private var requestStart: UInt64 = 0
    /// The id of the request whose handler runs, echoed in its response's `X-Request-Id` field.
    private var requestID: String?
    /// The id of the request whose streamed answer is being sent, for its record at the end.
    private var streamedRequestID: String?
    /// Whether body bytes followed a head that expects 100-continue in the same read.
    private var bodyBytesBuffered = false
    /// The peer's address, handed to handlers with each request.
    private let remoteAddress: String?
    /// The `Date` field value for the next response (RFC 9110 §6.6.1); injected, so the
    /// machine itself reads no clock and tests get fixed bytes.
    private let date: @Sendable () -> [UInt8]
    /// Renders the answers the machine gives itself (a request it cannot frame, a timeout, an eviction).
    private let refusals: RefusalRenderer

    /// A connection accepted at `now`: idle, the idle deadline running from the accept.
    init(
        limits: HTTPParserLimits, timeouts: Timeouts, remoteAddress: String? = nil,
        date: @escaping @Sendable () -> [UInt8], refusals: RefusalRenderer = .plainText,
        bodyMode: (@Sendable (HTTPRequestHead) -> Router.BodyMode)? = nil, now: UInt64
    ) {
        parser = HTTPParser(limits: limits)
        parser.defersBody = bodyMode != nil
        self.bodyMode = bodyMode
        self.refusals = refusals
        self.remoteAddress = remoteAddress
        self.date = date
        self.timeouts = timeouts
        deadline = Deadline(kind: .idle, at: now &+ timeouts.idle)
    }

    /// Whether the connection is closed.
    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    /// Whether a streaming handler still receives its body.
    var isStreamingBody: Bool {
        if case .streamingBody = state { return true }
        return false
    }

    /// Whether a streamed answer is being sent.
    var isStreamingResponse: Bool {
        if case .streamingResponse = state { return true }
        return false
    }

    /// Output not yet sent, in bytes.
    var unsentOutput: Int { output.count - outputOffset }

    /// Whether output is waiting to be sent.
    var hasUnsentOutput: Bool { outputOffset < output.count }

    /// Whether received bytes are thrown away unread (the connection is closing or closed).
    var discardsInput: Bool {
        switch state {
        case .idle, .readingHead, .readingBody, .streamingBody, .inHandler, .streamingResponse: return false
        case .closing, .lingering, .closed: return true
        }
    }

    /// Whether read events should run after a handler answered and buffered input was parsed.
    var readingAction: Action {
        switch state {
        case .idle, .readingHead, .readingBody: return peerClosed ? .close : .resumeReading
        case .streamingBody, .inHandler, .streamingResponse, .closing, .lingering, .closed: return .none
        }
    }

    /// Calls `body` with the output not yet sent; report what the socket took with `wrote`.
    func withUnsentOutput<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        output.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[outputOffset...])) }
    }

    // MARK: Events: input

    /// Bytes arrived: parses from `bytes` (which start at the first byte not consumed yet)
    /// until the driver has something to do; returns it and how many bytes were consumed.
    mutating func parse(_ bytes: UnsafeRawBufferPointer, now: UInt64) -> (action: ParseAction, consumed: Int) {
        var offset = 0
        while true {
            switch state {
            case .idle, .readingHead, .readingBody, .streamingBody: break
            case .inHandler, .streamingResponse: return (.pause, offset)
            case .closing, .lingering, .closed: return (.discardRest, offset)
            }
            if output.count - outputOffset > Self.backPressureLimit { return (.pause, offset) }
            let (event, used) = parser.parse(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            offset += used
            switch event {
            case .needMore:
                if case .idle = state, !parser.isIdle {
                    state = .readingHead
                    requestStart = now
                    arm(.header, from: now)
                }
                return (.readMore, offset)
            case .head(let head):
                if case .idle = state { requestStart = now }
                state = .readingBody(head)
                // A bodiless request's `.end` follows at once; its deadline is left as it is.
                if head.framing != .none {
                    arm(.body, from: now)
                    if let mode = bodyMode, head.framing != .length(0) {
                        switch startBody(head, mode: mode(head), bodyFollows: offset < bytes.count, now: now) {
                        case .some(let action): return (action, offset)
                        case .none: break
                        }
                    }
                    if head.expectContinue {
                        bodyBytesBuffered = offset < bytes.count
                        return (.checkExpectation(head), offset)
                    }
                }
            case .bodyPart(let part):
                guard case .streamingBody = state else { return (.discardRest, bytes.count) }
                arm(.body, from: now)
                return (.bodyPart(part), offset)
            case .end(let body):
                if case .streamingBody(let head) = state {
                    state = .inHandler(head)
                    disarm()
                    return (.bodyEnd, offset)
                }
                guard case .readingBody(let head) = state else { return (.discardRest, bytes.count) }
                state = .inHandler(head)
                disarm()
                let request = Request(head: head, body: body, remoteAddress: remoteAddress)
                requestID = request.id
                return (.callHandler(request), offset)
            case .error(let error):
                if case .idle = state { requestStart = now }
                let head = Self.head(of: state)
                let completed = queue(
                    refusals.response(Refusal(error)),
                    head: head, route: nil, close: true, includeBody: true, now: now)
                return (.responded(completed), offset)
            }
        }
    }

    /// Starts a deferred body the way its route reads it: nil to go on as before (whole), else what the driver does
    /// now (a 413 queued, or a streaming handler to start).
    private mutating func startBody(
        _ head: HTTPRequestHead, mode: Router.BodyMode, bodyFollows: Bool, now: UInt64
    ) -> ParseAction? {
        let limit: Int
        let streaming: Bool
        switch mode {
        case .buffered: (limit, streaming) = (parser.limits.maxBodyBytes, false)
        case .streamed(let routeLimit): (limit, streaming) = (routeLimit, true)
        }
        if let error = parser.startBody(limit: limit, streaming: streaming) {
            return .responded(queue(refusals.response(Refusal(error)), head: head, route: nil, close: true, includeBody: true, now: now))
        }
        guard streaming else { return nil }
        // RFC 9110 §10.1.1: the route takes the body, so a client that waits is told to send it.
        if head.expectContinue && !bodyFollows { output.append(contentsOf: ResponseEncoder.continueResponse) }
        state = .streamingBody(head)
        let request = Request(head: head, bodyStream: RequestBody(), remoteAddress: remoteAddress)
        requestID = request.id
        return .startStreaming(request)
    }

    /// The streaming handler's buffer is full and reading stops: the body deadline is lifted, since the wait is ours.
    mutating func bodyPaused() {
        if case .streamingBody = state { disarm() }
    }

    /// Reading resumes for a streamed body: its deadline runs again from now.
    mutating func bodyResumed(now: UInt64) {
        if case .streamingBody = state { arm(.body, from: now) }
    }

    /// The route takes the request that expects 100-continue: send `100 Continue`, unless
    /// body bytes already came with the head (the client did not wait).
    mutating func expectationAccepted() {
        if !bodyBytesBuffered { output.append(contentsOf: ResponseEncoder.continueResponse) }
    }

    /// The route refuses the request that expects 100-continue: send the final status
    /// without reading the body, and close (RFC 9110 §10.1.1).
    mutating func expectationRefused(_ response: Response, route: Int?, now: UInt64) -> Completed {
        let head = Self.head(of: state)
        return queue(response, head: head, route: route, close: true, includeBody: head?.method != .HEAD, now: now)
    }

    /// The handler answered: queue the response; the connection stays open when the
    /// request allows it (RFC 9112 §9.3), we are not draining and the peer has not closed.
    ///
    /// A streaming handler that answers before its body has arrived closes the connection after the answer: the
    /// rest of the body is never read. A streamed answer (``Response/stream``) queues its head and moves to
    /// `streamingResponse`: the driver sends the pieces (``appendPiece(_:)``) and ends it (``finishStream(now:)``),
    /// and nil is returned until then; `streamed` says so.
    mutating func handlerFinished(_ response: Response, route: Int?, now: UInt64) -> Completed? {
        handlerAnswered(response, route: route, now: now).completed
    }

    /// ``handlerFinished(_:route:now:)``, also saying whether a stream must now be pumped.
    mutating func handlerAnswered(
        _ response: Response, route: Int?, now: UInt64
    ) -> (completed: Completed?, streamed: Bool) {
        let head: HTTPRequestHead
        var close: Bool
        switch state {
        case .inHandler(let h): (head, close) = (h, !h.keepAlive)
        case .streamingBody(let h): (head, close) = (h, true)
        default: return (nil, false)
        }
        let status = response.status.code
        let hasBody = head.method != .HEAD && status != 204 && status != 304 && status >= 200
        guard let stream = response.stream, hasBody else {
            // A HEAD answer of a stream says its length when known, as the GET would (RFC 9110 §9.3.2); none otherwise.
            let framing = response.stream.map { stream -> ResponseEncoder.StreamFraming in
                stream.length.map { .length($0) } ?? .closeDelimited
            }
            return (
                queue(
                    response, head: head, route: route, close: close, includeBody: head.method != .HEAD,
                    streamFraming: head.method == .HEAD ? framing : nil, now: now), false
            )
        }
        close = close || draining || peerClosed
        let framing: ResponseEncoder.StreamFraming
        if let length = stream.length {
            framing = .length(length)
        } else if head.version.minor == 0 {
            // RFC 9112 §6.3: an HTTP/1.0 client cannot read chunks; the close ends the body.
            framing = .closeDelimited
            close = true
        } else {
            framing = .chunked
        }
        let keepAlive10 = !close && head.version.minor == 0
        let id = requestID
        requestID = nil
        ResponseEncoder.encode(
            response, includeBody: true, close: close, keepAliveHTTP10: keepAlive10, requestID: id, date: date(),
            streamFraming: framing, into: &output)
        disarm()
        streamedRequestID = id
        state = .streamingResponse(
            StreamedResponse(
                head: head, close: close, chunked: framing == .chunked, remaining: stream.length, route: route,
                status: status))
        return (nil, true)
    }

    /// Appends one piece of the streamed answer; false when the source gave more than its announced length
    /// (the answer is then broken off with ``abortStream(now:)``).
    mutating func appendPiece(_ piece: [UInt8]) -> Bool {
        guard case .streamingResponse(var streamed) = state else { return false }
        if let remaining = streamed.remaining {
            guard piece.count <= remaining else { return false }
            streamed.remaining = remaining - piece.count
            state = .streamingResponse(streamed)
        }
        ResponseEncoder.appendPiece(piece, chunked: streamed.chunked, into: &output)
        return true
    }

    /// The source ended: the last chunk is queued and the connection moves on as after any answer (nil when the
    /// source ended short of its announced length; break it off with ``abortStream(now:)``).
    mutating func finishStream(now: UInt64) -> Completed? {
        guard case .streamingResponse(let streamed) = state else { return nil }
        if let remaining = streamed.remaining, remaining != 0 { return nil }
        if streamed.chunked { output.append(contentsOf: ResponseEncoder.lastChunk) }
        let closing = streamed.close || draining || peerClosed
        if closing {
            state = .closing
            disarm()
        } else {
            state = .idle
            arm(.idle, from: now)
        }
        return streamCompleted(streamed, now: now)
    }

    /// The source failed, or gave a length other than announced: the connection closes at once, without the last
    /// chunk (RFC 9112 §7.1), so the client sees a broken body. Returns the record of the answer and `.close`.
    mutating func abortStream(now: UInt64) -> (completed: Completed?, action: Action) {
        guard case .streamingResponse(let streamed) = state else { return (nil, .none) }
        let completed = streamCompleted(streamed, now: now)
        return (completed, close())
    }

    private mutating func streamCompleted(_ streamed: StreamedResponse, now: UInt64) -> Completed {
        let id = streamedRequestID
        streamedRequestID = nil
        return Completed(
            method: streamed.head.method.rawValue, path: streamed.head.path, route: streamed.route, status: streamed.status,
            seconds: Double(now &- requestStart) / 1e9, requestID: id, head: streamed.head)
    }

    /// The peer's end of input was read.
    mutating func peerClosedInput() -> Action {
        peerClosed = true
        switch state {
        case .closing, .lingering:
            return close()
        case .idle, .readingHead, .readingBody:
            return hasUnsentOutput ? .pauseReading : close()
        case .inHandler, .streamingBody, .streamingResponse:
            // A streamed body that ends here is broken; the driver tells the handler (the machine moves on
            // when the deadline passes or the handler answers).
            return .pauseReading
        case .closed:
            return .none
        }
    }

    // MARK: Events: output

    /// The socket took `count` more bytes of output.
    mutating func wrote(_ count: Int) {
        outputOffset += count
    }

    /// The socket refused more output: the write deadline runs from now.
    mutating func writeBlocked(now: UInt64) {
        arm(.write, from: now)
    }

    /// All output is sent: a closing connection half-closes and lingers; a blocked write's
    /// deadline gives way to the state's own; kept input may be parsed again.
    mutating func writeCompleted(now: UInt64) -> Action {
        if output.capacity > 16 * 1024 { output = [] } else { output.removeAll(keepingCapacity: true) }
        outputOffset = 0
        switch state {
        case .closing:
            if peerClosed {
                _ = close()
                return .halfCloseAndClose
            }
            state = .lingering
            arm(.linger, from: now)
            return .halfCloseAndDrain
        case .closed:
            return .none
        case .idle, .readingHead, .readingBody, .streamingBody, .inHandler, .streamingResponse, .lingering:
            break
        }
        if deadline.kind == .write {
            switch state {
            case .readingHead: arm(.header, from: requestStart)
            case .readingBody, .streamingBody: arm(.body, from: now)
            case .inHandler, .streamingResponse: disarm()
            case .idle, .closing, .lingering, .closed: arm(.idle, from: now)
            }
        }
        switch state {
        case .idle, .readingHead, .readingBody, .streamingBody: return .parseBuffered
        case .inHandler, .streamingResponse, .closing, .lingering, .closed: return .none
        }
    }

    // MARK: Events: time and the server

    /// The sweeper saw the deadline pass: a head or body still arriving gets 408 and a
    /// close (a total deadline, not an idle timer); otherwise the connection closes.
    mutating func deadlinePassed(now: UInt64) -> Action {
        guard deadline.at != 0, now >= deadline.at else { return .none }
        switch deadline.kind {
        case .none:
            return .none
        case .header, .body:
            // RFC 9110 §15.5.9: 408 for a request not received in time.
            let failure = refusals.response(
                Refusal(status: .requestTimeout, code: "request_timeout", message: "The request was not received in time."))
            return .write(queueFinal(failure, now: now))
        case .idle, .write, .linger:
            return close()
        }
    }

    /// The server chose this connection to make room at the connection cap, when its
    /// deadline's ``Deadline/word`` was `expected`; nothing happens if the connection moved on since.
    ///
    /// A request still arriving gets `503 over_capacity` and a close, so a slow client
    /// answers for the room, not the next client; an idle, unread or lingering connection
    /// is just closed.
    mutating func evict(chosenWithDeadline expected: UInt64, now: UInt64) -> Action {
        guard deadline.word == expected, expected != 0 else { return .none }
        switch deadline.kind {
        case .header, .body:
            let response = refusals.response(
                Refusal(
                    status: .serviceUnavailable, code: "over_capacity",
                    message: "The server is at its connection limit and this request was too slow."))
            return .write(queueFinal(response, now: now))
        case .idle, .write, .linger:
            return close()
        case .none:
            return .none
        }
    }

    /// The server began shutting down: an idle connection closes now; any other finishes
    /// its request and closes after the response.
    mutating func serverShuttingDown() -> Action {
        draining = true
        switch state {
        case .idle: return close()
        case .readingHead, .readingBody, .streamingBody, .inHandler, .streamingResponse, .closing, .lingering, .closed:
            return .none
        }
    }

    /// The connection closes (an I/O error, the grace after shutdown ran out, or an action
    /// said so); terminal. Returns `.close` the first time, `.none` after.
    mutating func close() -> Action {
        if case .closed = state { return .none }
        state = .closed
        disarm()
        output = []
        outputOffset = 0
        return .close
    }

    /// Monotonic nanoseconds since a connection with `deadline` began waiting on its client,
    /// or nil while the server works on it (no deadline).
    ///
    /// Waiting means idle, a head or body still arriving, a response not being read, or a
    /// lingering close; the longest-waiting connection is the one to evict at the cap.
    static func waitingSince(_ deadline: Deadline, timeouts: Timeouts) -> UInt64? {
        guard deadline.at != 0, deadline.kind != .none else { return nil }
        return deadline.at &- timeouts.allowed(deadline.kind)
    }

    // MARK: Private

    private static func head(of state: State) -> HTTPRequestHead? {
        switch state {
        case .readingBody(let head), .streamingBody(let head), .inHandler(let head): return head
        case .streamingResponse(let streamed): return streamed.head
        case .idle, .readingHead, .closing, .lingering, .closed: return nil
        }
    }

    /// Queues a final error response for a deadline or an eviction and closes after it.
    private mutating func queueFinal(_ response: Response, now: UInt64) -> Completed {
        disarm()
        let head = Self.head(of: state)
        return queue(response, head: head, route: nil, close: true, includeBody: true, now: now)
    }

    /// Encodes a response into the output and moves on: to `idle` with the idle deadline,
    /// or to `closing` when the connection must close (RFC 9112 §9.6: `Connection: close`).
    private mutating func queue(
        _ response: Response, head: HTTPRequestHead?, route: Int?, close: Bool,
        includeBody: Bool, streamFraming: ResponseEncoder.StreamFraming? = nil, now: UInt64
    ) -> Completed {
        let closing = close || draining || peerClosed
        // RFC 9112 §9.3: an HTTP/1.0 client that asked for keep-alive is told it is kept.
        let keepAlive10 = !closing && head?.version.minor == 0
        let id = requestID
        requestID = nil
        ResponseEncoder.encode(
            response, includeBody: includeBody, close: closing, keepAliveHTTP10: keepAlive10,
            requestID: id, date: date(), streamFraming: streamFraming, into: &output)
        if closing {
            state = .closing
            disarm()
        } else {
            state = .idle
            arm(.idle, from: now)
        }
        return Completed(
            method: head?.method.rawValue ?? "-", path: head?.path ?? "-", route: route,
            status: response.status.code, seconds: Double(now &- requestStart) / 1e9, requestID: id,
            head: head)
    }

    private mutating func arm(_ kind: Deadline.Kind, from start: UInt64) {
        deadline = Deadline(kind: kind, at: start &+ timeouts.allowed(kind))
    }

    private mutating func disarm() {
        deadline = .none
    }
}
