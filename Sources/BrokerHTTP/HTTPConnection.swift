#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// One accepted TCP connection: reads, parses, dispatches to handlers and writes, in order.
///
/// `@unchecked Sendable`: every `var` is touched only on `worker.queue` (serial). The
/// sweeper and the accept queue read `deadline`, `deadlineKind` and `evictionPending`, which
/// are atomics, from other queues and hop onto `worker.queue` before acting.
final class HTTPConnection: @unchecked Sendable {
    /// Where the connection is in its request cycle.
    enum Phase {
        /// Between requests: no byte of the next one yet (keep-alive idle deadline).
        case idle
        /// Some bytes of a head have arrived (header deadline from the first byte).
        case head
        /// The head is complete and the body is arriving (body deadline).
        case body
        /// A handler is running; reading is paused so requests stay in order.
        case handling
        /// The last response is written and our side is shut; unread input is drained until EOF.
        case lingering
        /// The descriptor is closed or about to be.
        case closed
    }

    /// What the current deadline means when it passes.
    enum DeadlineKind: UInt8 { case none, idle, header, body, write, linger }

    let fd: Int32
    let id: Int
    let remoteAddress: String?
    let worker: HTTPWorker
    /// The server, held strongly: a handler may still run after the caller released the server without
    /// a shutdown, and its answer needs the server. The cycle ends when the connection closes and the
    /// server forgets it.
    let server: HTTPServer

    /// Monotonic nanoseconds when the current deadline passes; 0 when none.
    let deadline = Atomic<UInt64>(0)
    /// The kind of the current deadline, as `DeadlineKind.rawValue`.
    let deadlineKind = Atomic<UInt8>(0)
    /// Set by the accept queue when it picks this connection to close at the cap; cleared on the worker queue.
    let evictionPending = Atomic<Bool>(false)

    var phase: Phase = .idle
    var parser: HTTPParser
    var inbound: [UInt8] = []
    var pending: [UInt8] = []
    var pendingOffset = 0
    var closeAfterWrite = false
    var peerClosed = false
    var head: HTTPRequestHead?
    var requestStart: UInt64 = 0
    var readSource: (any DispatchSourceRead)?
    var writeSource: (any DispatchSourceWrite)?
    var readSuspended = false
    var writeArmed = false
    var liveSources = 0

    init(fd: Int32, id: Int, remoteAddress: String?, worker: HTTPWorker, server: HTTPServer) {
        self.fd = fd
        self.id = id
        self.remoteAddress = remoteAddress
        self.worker = worker
        self.server = server
        self.parser = HTTPParser(limits: server.configuration.limits)
    }

    /// Starts reading; called once, on the worker queue (the idle deadline was set at accept).
    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: worker.queue)
        source.setEventHandler { [unowned self] in self.onReadable() }
        source.setCancelHandler { [self] in self.sourceCancelled() }
        liveSources += 1
        readSource = source
        source.activate()
    }

    // MARK: Reading

    private func onReadable() {
        guard phase != .closed else { return }
        let buffer = worker.readBuffer
        let n = recv(fd, buffer.baseAddress, buffer.count, 0)
        if n > 0 {
            if phase == .lingering { return }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            if inbound.isEmpty {
                let used = process(bytes)
                if used < n, phase != .lingering, phase != .closed {
                    inbound.append(contentsOf: bytes[used...])
                }
            } else {
                inbound.append(contentsOf: bytes)
                processInbound()
            }
            flush()
        } else if n == 0 {
            peerClosed = true
            pauseReading()
            if phase == .lingering || (phase != .handling && pending.count == pendingOffset) {
                close()
            }
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            close()
        }
    }

    /// Parses what `inbound` holds, dropping what was consumed.
    func processInbound() {
        guard !inbound.isEmpty else { return }
        let used = inbound.withUnsafeBytes { process($0) }
        if phase == .lingering || phase == .closed {
            inbound = []
        } else if used > 0 {
            inbound.removeFirst(used)
        }
    }

    /// Feeds bytes to the parser and acts on its events; returns how many were consumed.
    private func process(_ bytes: UnsafeRawBufferPointer) -> Int {
        var offset = 0
        while true {
            switch phase {
            case .idle, .head, .body: break
            case .handling, .lingering, .closed: return offset
            }
            // Back-pressure: stop answering pipelined requests while much output is unsent.
            if pending.count - pendingOffset > 256 * 1024 { return offset }
            let (event, used) = parser.parse(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            offset += used
            switch event {
            case .needMore:
                if phase == .idle && !parser.isIdle {
                    phase = .head
                    requestStart = Monotonic.now()
                    setDeadline(.header, after: server.configuration.headerTimeout, from: requestStart)
                }
                return offset
            case .head(let h):
                if phase == .idle { requestStart = Monotonic.now() }
                head = h
                if h.framing == .none {
                    phase = .body  // `.end` follows at once
                } else {
                    phase = .body
                    setDeadline(.body, after: server.configuration.bodyTimeout)
                    if h.expectContinue && !answerExpectation(h, bodyBytesBuffered: offset < bytes.count) {
                        return bytes.count
                    }
                }
            case .end(let body):
                guard let h = head else { return bytes.count }
                dispatch(Request(head: h, body: body, remoteAddress: remoteAddress))
            case .error(let error):
                if phase == .idle { requestStart = Monotonic.now() }
                respond(Response.error(error.status, code: error.code, message: error.message),
                        method: head?.method.rawValue ?? "-", path: head?.path ?? "-", route: nil,
                        close: true, includeBody: true)
                return bytes.count
            }
        }
    }

    /// RFC 9110 §10.1.1: send 100 Continue, unless the request will be refused anyway.
    private func answerExpectation(_ h: HTTPRequestHead, bodyBytesBuffered: Bool) -> Bool {
        switch server.router.resolve(h.method, h.path) {
        case .notFound, .methodNotAllowed:
            let response = server.routingFailure(for: h)
            respond(response.response, method: h.method.rawValue, path: h.path, route: response.route,
                    close: true, includeBody: h.method != .HEAD)
            return false
        case .handler:
            if !bodyBytesBuffered { pending.append(contentsOf: ResponseEncoder.continueResponse) }
            return true
        }
    }

    // MARK: Dispatching

    private func dispatch(_ request: Request) {
        let h = request.head
        let includeBody = h.method != .HEAD
        switch server.router.resolve(h.method, h.path) {
        case .handler(.sync(let handler), let route):
            respond(handler(request), method: h.method.rawValue, path: h.path, route: route,
                    close: !h.keepAlive, includeBody: includeBody)
        case .handler(.fastPath(let fast, let slow), let route):
            if let response = fast(request) {
                respond(response, method: h.method.rawValue, path: h.path, route: route,
                        close: !h.keepAlive, includeBody: includeBody)
            } else {
                runAsync(slow, request, route: route)
            }
        case .handler(.async(let handler), let route):
            runAsync(handler, request, route: route)
        case .notFound, .methodNotAllowed:
            let failure = server.routingFailure(for: h)
            respond(failure.response, method: h.method.rawValue, path: h.path, route: failure.route,
                    close: !h.keepAlive, includeBody: includeBody)
        }
    }

    /// Runs a handler that may wait as a task; reading pauses so pipelined answers stay in order.
    private func runAsync(_ handler: @escaping @Sendable (Request) async -> Response, _ request: Request, route: Int) {
        let h = request.head
        let includeBody = h.method != .HEAD
        phase = .handling
        clearDeadline()
        pauseReading()
        let queue = worker.queue
        Task {
            let response = await handler(request)
            queue.async {
                // Shutdown closes a connection whose handler outlives the grace: a closed
                // connection drops the answer.
                guard self.phase != .closed else { return }
                self.respond(response, method: h.method.rawValue, path: h.path, route: route,
                             close: !h.keepAlive, includeBody: includeBody)
                self.continueAfterHandler()
            }
        }
    }

    /// Encodes a response into the output buffer, records it, and moves to the next phase.
    private func respond(_ response: Response, method: String, path: String, route: Int?, close: Bool, includeBody: Bool) {
        let closing = close || server.isDraining || peerClosed
        let keepAlive10 = !closing && head?.version.minor == 0
        ResponseEncoder.encode(response, includeBody: includeBody, close: closing, keepAliveHTTP10: keepAlive10, into: &pending)
        let seconds = Double(Monotonic.now() &- requestStart) / 1e9
        worker.metrics.withLock { $0.record(route: route, status: response.status.code, seconds: seconds) }
        server.observer?.requestCompleted(method: method, path: path, status: response.status.code, seconds: seconds)
        head = nil
        if closing {
            closeAfterWrite = true
            phase = .lingering
            clearDeadline()
        } else {
            phase = .idle
            setDeadline(.idle, after: server.configuration.idleTimeout)
        }
    }
}
