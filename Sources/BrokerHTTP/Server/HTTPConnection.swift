import CEpoll
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One accepted TCP connection: the `recv`, `send` and epoll interest that carry out what its
/// `HTTPConnectionStateMachine` decides; its worker (``HTTPWorker``) tells it when the socket is ready.
///
/// The server talks to a connection only through `start`, `checkDeadline`, `waitingSince`,
/// `requestEviction`, `beginShutdown` and `forceClose`; each hops onto the connection's worker
/// queue itself, or reads only atomics.
///
/// `@unchecked Sendable`: every `var` is touched only on the worker's thread (serial). The sweeper
/// and the accept queue read the published deadline and `evictionPending`, which are atomics,
/// and hop onto the worker before acting.
final class HTTPConnection: EpollMember, @unchecked Sendable {
    /// The key of this connection in the server's table.
    let id: Int
    private let fd: Int32
    private let worker: HTTPWorker
    /// The counters of the worker this connection runs on, owned by the server.
    private let metrics: HTTPMetricsCell
    /// The server, held strongly: a handler may still run after the caller released the server without
    /// a shutdown, and its answer needs the server. The cycle ends when the connection closes and the
    /// server forgets it.
    private let server: HTTPServer
    private let timeouts: HTTPConnectionStateMachine.Timeouts

    /// The machine's deadline, published for the sweeper and the accept queue as one
    /// ``HTTPConnectionStateMachine/Deadline/word``: a kind and a time read apart could pair a new
    /// kind with an old time and make a connection that was just served look like the longest waiting.
    private let deadlineWord = Atomic<UInt64>(0)
    /// Set by the accept queue when it picks this connection to close at the cap; cleared on the worker queue.
    private let evictionPending = Atomic<Bool>(false)

    private var machine: HTTPConnectionStateMachine
    /// The deadline last stored in the atomics.
    private var published = HTTPConnectionStateMachine.Deadline.none
    /// Bytes received and not yet consumed by the machine (only leftovers of a partial request).
    private var inbound: [UInt8] = []
    /// Whether the connection waits for input (not while a handler runs, or after the peer's input ended).
    private var reading = false
    /// Whether the connection waits for room to write the rest of its output.
    private var writing = false
    /// The events the worker's epoll set holds for the socket now (0: not in the set).
    private var interest: UInt32 = 0
    /// Set once the descriptor is closed.
    private var tornDown = false
    /// The body a streaming handler reads while it still arrives; nil once it ended or was given up.
    private var body: RequestBody?
    /// Whether parsing waits for the streaming handler to take some of its buffered body.
    private var bodyBlocked = false
    /// The pump of a streamed answer, waiting for its last piece to reach the socket.
    private var pumpWaiter: CheckedContinuation<PumpStep, Never>?

    /// A connection accepted now; its idle deadline runs from the accept, so at the cap a
    /// connection its worker has not started yet (a burst) can make room too.
    init(fd: Int32, id: Int, remoteAddress: String?, worker: HTTPWorker, metrics: HTTPMetricsCell, server: HTTPServer) {
        self.fd = fd
        self.id = id
        self.worker = worker
        self.metrics = metrics
        self.server = server
        timeouts = HTTPConnectionStateMachine.Timeouts(server.configuration)
        machine = HTTPConnectionStateMachine(
            limits: server.configuration.limits, timeouts: timeouts,
            remoteAddress: remoteAddress, date: HTTPConnection.date, refusals: server.router.refusals,
            bodyMode: server.bodyMode, now: Monotonic.now())
        publish()
    }

    /// The `Date` field value for responses: the process-wide cache of the current second.
    private static let date: @Sendable () -> [UInt8] = { HTTPDateCache.shared.current() }

    // MARK: The server's interface

    /// Starts reading on the worker queue; called once.
    func start() {
        worker.execute { [self] in
            // A deadline or an eviction may have closed it before this block ran.
            guard !tornDown else { return }
            worker.attach(self, id: id)
            reading = true
            updateInterest()
        }
    }

    /// The worker found the socket ready with epoll `events`; on the worker queue.
    func ready(_ events: UInt32) {
        // Hang-up and error are reported whatever was asked for: the write (or the read) then fails and closes.
        let failed = events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
        if writing && (events & EPOLLOUT.rawValue != 0 || (failed && !reading)) { flush() }
        if reading && (events & EPOLLIN.rawValue != 0 || failed) {
            onReadable()
        } else if !reading, interest & EPOLLIN.rawValue != 0, events & EPOLLIN.rawValue != 0 || failed {
            // Input came while reading is paused (``pauseReading()`` leaves the set as it is): the pause reaches the
            // epoll set now, or the level-triggered readiness would be reported on every turn until reading resumes.
            updateInterest()
        }
    }

    /// Called by the sweeper: when the published deadline has passed, the machine hears of it on the worker queue.
    func checkDeadline(now: UInt64) {
        let deadline = HTTPConnectionStateMachine.Deadline(word: deadlineWord.load(ordering: .relaxed))
        guard deadline.at != 0 && now >= deadline.at else { return }
        worker.execute { [self] in execute(machine.deadlinePassed(now: now)) }
    }

    /// Monotonic nanoseconds since the connection began waiting on its client, or nil while the
    /// server works on it or it is already chosen for eviction.
    ///
    /// Read from the accept queue.
    var waitingSince: UInt64? {
        guard !evictionPending.load(ordering: .relaxed) else { return nil }
        let deadline = HTTPConnectionStateMachine.Deadline(word: deadlineWord.load(ordering: .relaxed))
        return HTTPConnectionStateMachine.waitingSince(deadline, timeouts: timeouts)
    }

    /// Asks the connection to make room at the cap; false when it no longer waits on its client
    /// or another accept already chose it. The machine decides on the worker queue, and does
    /// nothing if the connection moved on since.
    func requestEviction() -> Bool {
        guard waitingSince != nil,
            evictionPending.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        else { return false }
        let expected = deadlineWord.load(ordering: .relaxed)
        worker.execute { [self] in
            defer { evictionPending.store(false, ordering: .relaxed) }
            execute(machine.evict(chosenWithDeadline: expected, now: Monotonic.now()))
        }
        return true
    }

    /// The server is shutting down: an idle connection closes, a busy one closes after its response.
    func beginShutdown() {
        worker.execute { [self] in execute(machine.serverShuttingDown()) }
    }

    /// Closes the connection whatever it is doing (the shutdown grace ran out); a late handler's answer is dropped.
    func forceClose() {
        worker.execute { [self] in execute(machine.close()) }
    }

    // MARK: Reading

    private func onReadable() {
        guard !machine.isClosed else { return }
        let buffer = worker.readBuffer
        let n = recv(fd, buffer.baseAddress, buffer.count, 0)
        if n > 0 {
            // Closing or lingering: drain and discard.
            if machine.discardsInput { return }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            if inbound.isEmpty {
                let used = feed(bytes)
                if used < n, !machine.discardsInput {
                    inbound.append(contentsOf: bytes[used...])
                }
            } else {
                inbound.append(contentsOf: bytes)
                feedInbound()
            }
            flush()
        } else if n == 0 {
            pauseReading()
            // The end of input stays readable: the set stops reporting it now.
            updateInterest()
            // A streamed body that ends with the input is broken; its handler hears of it.
            failBody()
            execute(machine.peerClosedInput())
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            execute(machine.close())
        }
    }

    /// Feeds what `inbound` holds to the machine, dropping what was consumed.
    private func feedInbound() {
        guard !inbound.isEmpty else { return }
        let used = inbound.withUnsafeBytes { feed($0) }
        if machine.discardsInput {
            inbound = []
        } else if used > 0 {
            inbound.removeFirst(used)
        }
    }

    /// Feeds bytes to the machine and carries out its actions; returns how many were consumed.
    private func feed(_ bytes: UnsafeRawBufferPointer) -> Int {
        // The streaming handler's buffer is full: the bytes wait in `inbound` until it drains.
        if bodyBlocked { return 0 }
        var offset = 0
        defer { publish() }
        while true {
            let (action, used) = machine.parse(UnsafeRawBufferPointer(rebasing: bytes[offset...]), now: Monotonic.now())
            offset += used
            switch action {
            case .readMore, .pause:
                return offset
            case .discardRest:
                return bytes.count
            case .callHandler(let request):
                if !callHandler(request) { return offset }
            case .startStreaming(let request):
                startStreaming(request)
            case .bodyPart(let part):
                if let body, !body.push(part) {
                    bodyBlocked = true
                    machine.bodyPaused()
                    pauseReading()
                    return offset
                }
            case .bodyEnd:
                body?.finish()
                body = nil
                // Like any running handler's: pipelined requests wait until it answers.
                pauseReading()
            case .checkExpectation(let head):
                // RFC 9110 §10.1.1: no 100 Continue for a request that will be refused anyway.
                switch server.router.resolve(head.method, head.path) {
                case .notFound, .methodNotAllowed:
                    let failure = server.routingFailure(for: head)
                    record(machine.expectationRefused(failure.response, route: failure.route, now: Monotonic.now()))
                case .handler:
                    machine.expectationAccepted()
                }
            case .responded(let completed):
                record(completed)
                failBody()
            }
        }
    }

    // MARK: Handlers

    /// Runs the route's handler; true when it answered at once, false when it runs as a task.
    private func callHandler(_ request: Request) -> Bool {
        let h = request.head
        switch server.router.resolve(h.method, h.path) {
        case .handler(.sync(let handler), let route):
            handlerFinished(handler(request), route: route)
        case .handler(.fastPath(let fast, let slow), let route):
            guard let response = fast(request) else {
                runAsync(slow, request, route: route)
                return false
            }
            handlerFinished(response, route: route)
        case .handler(.async(let handler), let route), .handler(.streaming(let handler, _), let route):
            runAsync(handler, request, route: route)
            return false
        case .notFound, .methodNotAllowed:
            let failure = server.routingFailure(for: h)
            handlerFinished(failure.response, route: failure.route)
        }
        return true
    }

    /// Runs a handler that may wait as a task; reading pauses so pipelined answers stay in order.
    private func runAsync(_ handler: @escaping @Sendable (Request) async -> Response, _ request: Request, route: Int) {
        pauseReading()
        runTask(handler, request, route: route)
    }

    /// Runs `handler` as a task: on this connection's worker for a route that asks for it (``Router/add(_:_:_:onWorker:)``),
    /// on the global pool otherwise; its answer comes back to the worker queue.
    private func runTask(_ handler: @escaping @Sendable (Request) async -> Response, _ request: Request, route: Int) {
        let worker = self.worker
        guard server.router.runsOnWorker(route) else {
            Task {
                let response = await RequestID.$current.withValue(request.id) { await handler(request) }
                worker.execute { self.answered(response, route: route) }
            }
            return
        }
        Task(executorPreference: worker) {
            let response = await RequestID.$current.withValue(request.id) { await handler(request) }
            // Still on the worker's queue (the preferred executor) unless the handler left it: answer without a hop.
            if worker.isCurrent {
                self.answered(response, route: route)
            } else {
                worker.execute { self.answered(response, route: route) }
            }
        }
    }

    /// A handler that ran as a task answered; on the worker queue.
    private func answered(_ response: Response, route: Int) {
        // Shutdown closes a connection whose handler outlives the grace: a closed
        // connection drops the answer.
        guard !machine.isClosed else {
            response.stream?.cancel()
            return
        }
        handlerFinished(response, route: route)
        feedInbound()
        flush()
        execute(machine.readingAction)
    }

    /// Starts a streaming route's handler as soon as the head is read; reading goes on and feeds its body.
    private func startStreaming(_ request: Request) {
        guard let stream = request.bodyStream,
            case .handler(.streaming(let handler, _), let route) = server.router.resolve(request.method, request.path)
        else { return }
        body = stream
        let worker = self.worker
        stream.setOnDrain { [self] in
            worker.execute { self.bodyDrained() }
        }
        runTask(handler, request, route: route)
    }

    /// The streaming handler took its buffer down: parse what waited, and read again.
    private func bodyDrained() {
        guard bodyBlocked, !machine.isClosed else { return }
        bodyBlocked = false
        machine.bodyResumed(now: Monotonic.now())
        if inbound.isEmpty {
            // The last piece may have filled the buffer: the body's end is parsed from no bytes at all.
            _ = feed(UnsafeRawBufferPointer(start: nil, count: 0))
        } else {
            feedInbound()
        }
        flush()
        if !bodyBlocked && machine.isStreamingBody { resumeReading() }
        publish()
    }

    /// The streamed body will not be completed (a framing error, a deadline, the peer or the handler gave up):
    /// its reader gets `.broken`.
    private func failBody() {
        guard let stream = body else { return }
        body = nil
        bodyBlocked = false
        stream.fail(.broken)
    }

    /// Hands the machine a handler's response, and records it; a streamed answer starts its pump.
    private func handlerFinished(_ response: Response, route: Int?) {
        // The shutdown event may still be on its way to this queue; the flag is already set.
        if server.isDraining && !machine.draining { _ = machine.serverShuttingDown() }
        let (completed, streamed) = machine.handlerAnswered(response, route: route, now: Monotonic.now())
        // A handler that answers before its body arrived will not read the rest.
        if !machine.isStreamingBody { failBody() }
        if let completed { record(completed) }
        guard let stream = response.stream else { return }
        if streamed {
            pauseReading()
            pump(stream)
        } else {
            // HEAD, 204, 304, or a connection already closed: the source is not read.
            stream.cancel()
        }
    }

    // MARK: Streamed answers

    /// What the pump does after handing over a piece.
    private enum PumpStep {
        /// Ask the source for the next piece.
        case next
        /// Stop; the source ended.
        case done
        /// Stop and release the source (the connection closed or the answer was broken off).
        case cancel
    }

    /// Pulls a streamed answer's pieces one at a time, each after the previous one reached the socket.
    private func pump(_ stream: ResponseStream) {
        let worker = self.worker
        Task {
            while true {
                let piece: [UInt8]?
                do {
                    piece = try await stream.next()
                } catch {
                    worker.execute { self.abortStream() }
                    stream.cancel()
                    return
                }
                let step = await withCheckedContinuation { continuation in
                    worker.execute { self.deliver(piece, to: continuation) }
                }
                switch step {
                case .next: continue
                case .done: return
                case .cancel:
                    stream.cancel()
                    return
                }
            }
        }
    }

    /// Queues one piece (or the end) of the streamed answer and says when the pump may go on; on the worker queue.
    private func deliver(_ piece: [UInt8]?, to continuation: CheckedContinuation<PumpStep, Never>) {
        guard machine.isStreamingResponse else { return continuation.resume(returning: .cancel) }
        guard let piece else {
            guard let completed = machine.finishStream(now: Monotonic.now()) else {
                abortStream()
                return continuation.resume(returning: .done)
            }
            record(completed)
            continuation.resume(returning: .done)
            feedInbound()
            flush()
            execute(machine.readingAction)
            return
        }
        guard machine.appendPiece(piece) else {
            abortStream()
            return continuation.resume(returning: .cancel)
        }
        flush()
        if machine.isClosed {
            continuation.resume(returning: .cancel)
        } else if machine.hasUnsentOutput {
            pumpWaiter = continuation
        } else {
            continuation.resume(returning: .next)
        }
    }

    /// Breaks off a streamed answer: the connection closes without the body's end.
    private func abortStream() {
        let (completed, action) = machine.abortStream(now: Monotonic.now())
        if let completed { record(completed) }
        execute(action)
    }

    /// Lets a waiting pump go on (`.next`) or stop (`.cancel`).
    private func resumePump(_ step: PumpStep) {
        guard let waiter = pumpWaiter else { return }
        pumpWaiter = nil
        waiter.resume(returning: step)
    }

    private func record(_ c: HTTPConnectionStateMachine.Completed) {
        metrics.shard.withLock { $0.record(route: c.route, status: c.status, seconds: c.seconds) }
        server.observer?.requestCompleted(
            CompletedRequest(
                method: c.method, path: c.path, status: c.status, seconds: c.seconds, requestID: c.requestID, head: c.head))
    }

    // MARK: Writing

    /// Writes as much output as the socket takes; arms the write source for the rest.
    private func flush() {
        guard !machine.isClosed else { return }
        while machine.hasUnsentOutput {
            let n = machine.withUnsentOutput { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                machine.wrote(n)
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                armWrite()
                machine.writeBlocked(now: Monotonic.now())
                publish()
                return
            } else {
                execute(machine.close())
                return
            }
        }
        disarmWrite()
        execute(machine.writeCompleted(now: Monotonic.now()))
        resumePump(machine.isStreamingResponse ? .next : .cancel)
    }

    // MARK: Actions

    /// Carries out one of the machine's actions, then publishes its deadline.
    private func execute(_ action: HTTPConnectionStateMachine.Action) {
        switch action {
        case .none:
            break
        case .write(let completed):
            record(completed)
            flush()
        case .parseBuffered:
            // Output drained after back-pressure: answer what is still buffered.
            if !inbound.isEmpty {
                feedInbound()
                if machine.hasUnsentOutput { flush() }
            }
        case .resumeReading:
            resumeReading()
        case .pauseReading:
            pauseReading()
        case .halfCloseAndDrain:
            Glibc.shutdown(fd, Int32(SHUT_WR))
            resumeReading()
        case .halfCloseAndClose:
            Glibc.shutdown(fd, Int32(SHUT_WR))
            tearDown()
        case .close:
            tearDown()
        }
        if body != nil && !machine.isStreamingBody { failBody() }
        publish()
    }

    /// Stores the machine's deadline in the atomics when it changed.
    private func publish() {
        let deadline = machine.deadline
        guard deadline != published else { return }
        published = deadline
        deadlineWord.store(deadline.word, ordering: .relaxed)
    }

    /// Waits for room to write the rest of the output.
    private func armWrite() {
        if !writing {
            writing = true
            updateInterest()
        }
    }

    private func disarmWrite() {
        if writing {
            writing = false
            updateInterest()
        }
    }

    /// Stops reading (a handler runs, a streamed body's buffer is full, or the peer closed).
    ///
    /// The epoll set keeps the socket's read interest until input actually comes meanwhile (``ready(_:)`` drops it
    /// then): a client that waits for its answer before sending more, as nearly all do, costs no `epoll_ctl` to pause
    /// and none to resume, where taking the socket out of the set and back cost two per call of a handler that waits.
    private func pauseReading() {
        reading = false
    }

    /// Starts read events again, unless the peer's input has ended.
    private func resumeReading() {
        if !reading, !machine.peerClosed, !tornDown {
            reading = true
            updateInterest()
        }
    }

    /// Tells the worker's epoll set what the connection waits for now. A socket that waits for
    /// nothing leaves the set, since a hang-up would otherwise be reported over and over.
    private func updateInterest() {
        let wanted = (reading ? EPOLLIN.rawValue : 0) | (writing ? EPOLLOUT.rawValue : 0)
        guard wanted != interest, !tornDown else { return }
        guard worker.watch(fd, id: id, from: interest, to: wanted) else {
            // The kernel refused (out of memory, or the watch limit): a socket nobody watches would hang.
            interest = 0
            if !machine.isClosed { worker.execute { [self] in execute(machine.close()) } }
            return
        }
        interest = wanted
    }

    /// The machine closed: takes the socket out of the epoll set, closes it, and leaves the worker's and the server's tables.
    private func tearDown() {
        guard !tornDown else { return }
        reading = false
        writing = false
        updateInterest()
        tornDown = true
        worker.detach(id)
        Glibc.close(fd)
        inbound = []
        failBody()
        resumePump(.cancel)
        server.connectionClosed(self)
    }
}

/// The monotonic clock in nanoseconds (CLOCK_MONOTONIC), for deadlines and latency.
enum Monotonic {
    /// Nanoseconds since an arbitrary fixed point; never goes back.
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}
