import BrokerHTTP
import BrokerTLS
import CEpoll

#if canImport(Glibc)
import Glibc
#endif

/// Statement round trips on an HTTP epoll worker.
///
/// A run belongs to one owner at a time, and only its owner touches the session's state:
/// 1. the task that starts it: it checks the idle session, encodes the pipeline and writes it with non-blocking
///    writes, inline (a session to open first goes to `queue`, whose start-up blocks, then to the worker);
/// 2. the worker, from the moment the run is published in ``Exchange/awaiting`` under the lock: the socket, watched
///    for EPOLLIN while the session is open, reports the answer, and the worker reads, parses and resumes the task.
///
/// So a round trip costs the worker's readiness wake-up and the task's resumption; a task that runs on that worker
/// (an HTTP route with `onWorker`) is resumed there, without waking any thread. A write that does not go out at once
/// (a full socket buffer, TLS wanting to read) is finished by the worker (EPOLLOUT), reading meanwhile.
///
/// Deadlines: one ``WorkerTimer`` per connection, scheduled only on the worker. A task hands over a run without a
/// hop to the worker while the timer is already set to fire no later than the run's deadline (it fires, finds the run
/// not due and sets itself for the deadline); else it asks the worker to set it (``checkRun(_:)``). At the deadline
/// — or when the task is cancelled — a CancelRequest goes out on a separate connection (from `queue`, it blocks) and
/// the worker reads on to each outstanding ReadyForQuery, within the connect timeout, so the session stays in step;
/// then `deadlineExceeded(cancelled:)` / `cancelled(stopped:)`, as on the queue path.
extension PostgresConnection {
    /// The session's owner and the runs in flight, under ``exchange``'s lock.
    struct Exchange {
        /// Whether a run (or the worker's check of an idle session, or close) holds the session's state.
        var owned = false
        /// The run handed to the worker: from then on only the worker touches the session and the run.
        var awaiting: EpollRun?
        /// Runs that found the session held, in arrival order (the pool lends a connection to one task at a time;
        /// this keeps any other caller correct).
        var waiting: [EpollRun] = []
        /// The last run whose task was cancelled.
        var cancelRequested = 0
        /// When the worker's timer fires next (monotonic nanoseconds), 0 when it is not set.
        var timerFiresAt: UInt64 = 0
    }

    /// One pipeline on the worker path and where it stands; touched only by its current owner.
    final class EpollRun: @unchecked Sendable {
        let id: Int
        let segments: [[PostgresQuery]]
        let deadline: UInt64
        let continuation: CheckedContinuation<Result<[[PostgresRows]], PostgresError>, Never>
        /// When the run began, for the round-trip time /metrics reports (a reconnect included).
        var started: UInt64 = 0
        /// The encoded pipeline and how much of it went out.
        var bytes: [UInt8] = []
        var offset = 0
        var written: Bool { offset >= bytes.count }
        var reader: PipelineReader
        /// Whether the pipeline already ran again after a stale prepared statement.
        var retried = false
        /// Set once the deadline passed or the task was cancelled after the pipeline went out.
        var abandon: Abandon?

        init(
            id: Int, segments: [[PostgresQuery]], deadline: UInt64,
            continuation: CheckedContinuation<Result<[[PostgresRows]], PostgresError>, Never>
        ) {
            self.id = id
            self.segments = segments
            self.deadline = deadline
            self.continuation = continuation
            self.reader = PipelineReader(segments: segments, newStatements: segments.map { _ in [:] })
        }
    }

    /// A run given up (its deadline or its task's cancellation) whose session is being brought back in step.
    struct Abandon {
        /// The task was cancelled (else the deadline passed).
        var cancelled: Bool
        /// ReadyForQuery messages still to come, one per unanswered Sync.
        var syncsLeft: Int
        /// When the wait for them ends (the connect timeout after the cancel began).
        var grace: UInt64
        /// Whether the CancelRequest went out.
        var requestSent = false

        func error(stopped: Bool) -> PostgresError {
            cancelled ? .cancelled(stopped: stopped) : .deadlineExceeded(cancelled: stopped)
        }
    }

    /// ``run(segments:deadline:)`` on the worker path.
    func runOnWorker(
        _ worker: HTTPWorker, segments: [[PostgresQuery]], deadline: UInt64, runID: Int
    ) async -> Result<[[PostgresRows]], PostgresError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[[PostgresRows]], PostgresError>, Never>) in
                let run = EpollRun(id: runID, segments: segments, deadline: deadline, continuation: continuation)
                let first = exchange.withLock { state -> Bool in
                    guard !state.owned else {
                        state.waiting.append(run)
                        return false
                    }
                    state.owned = true
                    return true
                }
                if first { begin(run) }
            }
        } onCancel: {
            let handedOver = exchange.withLock { state -> Bool in
                state.cancelRequested = runID
                return state.awaiting?.id == runID
            }
            // A run its task still holds sees the request when it hands over (or before it sends anything).
            if handedOver { worker.execute { self.checkRun(runID) } }
        }
    }

    /// Starts `run`, owned by the caller (any thread): an idle session that ended is closed, a closed one opened on
    /// `queue`, then the pipeline is sent.
    private func begin(_ run: EpollRun) {
        run.started = PostgresSocket.now()
        if exchange.withLock({ $0.cancelRequested == run.id }) {
            // Cancelled before its turn (waiting behind another run): nothing ran.
            return finish(run, .failure(.cancelled(stopped: true)))
        }
        let queries = run.segments.flatMap { $0 }
        guard !queries.isEmpty else { return finish(run, .success(run.segments.map { _ in [] })) }
        do throws(PostgresError) {
            try validate(queries)
        } catch {
            return finish(run, .failure(error))
        }
        if fd >= 0, idleSessionIsStale() { disconnect() }
        guard fd >= 0, let worker else {
            queue.async {
                do throws(PostgresError) {
                    try self.connectIfNeeded(deadline: run.deadline)
                } catch {
                    return self.finish(run, .failure(error))
                }
                // The socket joins the worker's set there (watch is the worker's), and the pipeline goes out from it.
                self.worker?.execute { self.send(run) }
            }
            return
        }
        if watched == 0 && !worker.isCurrent {
            worker.execute { self.send(run) }
            return
        }
        send(run)
    }

    /// Encodes and writes `run`'s pipeline as far as the socket takes it now, then hands the run to the worker;
    /// by the run's owner, on an open session.
    private func send(_ run: EpollRun) {
        guard let worker else { return }
        if exchange.withLock({ $0.cancelRequested == run.id }) {
            // Nothing went out: the session is untouched.
            return finish(run, .failure(.cancelled(stopped: true)))
        }
        let (bytes, newStatements) = encodePipeline(run.segments)
        run.bytes = bytes
        run.offset = 0
        run.reader = PipelineReader(segments: run.segments, newStatements: newStatements)
        do throws(PostgresError) {
            // Records TLS already decrypted are read first (by the worker), as the queue path does.
            if tls?.hasBuffered != true { try transmitPending(run) }
        } catch {
            return failRun(run, error)
        }
        if worker.isCurrent { return handOver(run) }
        guard run.written, watched == EPOLLIN.rawValue, tls?.hasBuffered != true else {
            worker.execute { self.handOver(run) }
            return
        }
        let check = exchange.withLock { state -> Bool in
            state.awaiting = run
            return state.timerFiresAt == 0 || run.deadline < state.timerFiresAt || state.cancelRequested == run.id
        }
        // From here the worker owns the session: nothing of it is touched on this thread.
        if check { worker.execute { self.checkRun(run.id) } }
    }

    /// Writes what is left of `run`'s pipeline until the socket (or TLS) must wait.
    private func transmitPending(_ run: EpollRun) throws(PostgresError) {
        while run.offset < run.bytes.count {
            let count = try transmit(run.bytes, from: run.offset)
            if count == 0 { return }
            run.offset += count
        }
    }

    /// Takes `run` on the worker: the socket watched for what the run waits for, the deadline timer set.
    private func handOver(_ run: EpollRun) {
        exchange.withLock { $0.awaiting = run }
        guard updateInterest(for: run) else {
            return failRun(run, .connectionLost("the worker cannot watch the socket of \(endpointText)"))
        }
        checkRun(run.id)
        // Records TLS already decrypted are not announced by the socket.
        if exchange.withLock({ $0.awaiting === run }), tls?.hasBuffered == true { service(run, events: 0) }
    }

    /// On the worker: sets the timer for the run's deadline (or its cancel's grace) and starts the cancel its task
    /// asked for.
    func checkRun(_ id: Int) {
        let (run, cancelled) = exchange.withLock { ($0.awaiting, $0.cancelRequested == id) }
        guard let run, run.id == id else { return }
        if cancelled && run.abandon == nil { return abandon(run, cancelled: true) }
        arm(at: run.abandon?.grace ?? run.deadline)
    }

    /// Watches the socket for input, and for output while the pipeline is not all written (or TLS asks for it).
    private func updateInterest(for run: EpollRun) -> Bool {
        guard let worker, fd >= 0 else { return false }
        let output = (!run.written && !tlsWriteWantsRead) || tlsReadWantsWrite
        let wanted = EPOLLIN.rawValue | (output ? EPOLLOUT.rawValue : 0)
        guard wanted != watched else { return true }
        if memberID == 0 {
            memberID = HTTPWorker.nextMemberID()
            worker.attach(self, id: memberID)
        }
        guard worker.watch(fd, id: memberID, from: watched, to: wanted) else { return false }
        watched = wanted
        return true
    }

    /// Takes the socket out of the worker's set and table before it is closed (by ``disconnect()``): on the worker
    /// at once; elsewhere the close itself leaves the set, and the table entry goes in a block on the worker.
    func leaveWorker() {
        guard memberID != 0, let worker else { return }
        let id = memberID
        memberID = 0
        if worker.isCurrent {
            if fd >= 0 && watched != 0 { _ = worker.watch(fd, id: id, from: watched, to: 0) }
            worker.detach(id)
        } else {
            worker.execute { worker.detach(id) }
        }
        watched = 0
    }

    /// The socket is ready (on the worker).
    package func ready(_ events: UInt32) {
        var idle = false
        let run = exchange.withLock { state -> EpollRun? in
            if let run = state.awaiting { return run }
            if !state.owned {
                state.owned = true
                idle = true
            }
            return nil
        }
        if let run { return service(run, events: events) }
        // An idle session the server wrote to has ended (or is out of step): closed now, reopened on next use.
        // (A task that still holds its run sees the answer reported again once it hands over: the set is
        // level-triggered.)
        if idle {
            disconnect()
            release()
        }
    }

    /// Writes what is left, reads what arrived and parses it; finishes the run once every Sync is answered.
    private func service(_ run: EpollRun, events: UInt32) {
        let failed = events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
        let readable = events & EPOLLIN.rawValue != 0 || failed
        let writable = events & EPOLLOUT.rawValue != 0
        do throws(PostgresError) {
            if !run.written && (writable || (readable && tlsWriteWantsRead)) { try transmitPending(run) }
            // A TLS read may wait for the socket to be writable.
            if readable || (writable && tlsReadWantsWrite) || tls?.hasBuffered == true { try receiveAvailable() }
            while let message = try framer.next() {
                if case .parameterStatus(let name, let value) = message { parameters[name] = value }
                if var abandon = run.abandon {
                    // Bringing the session back in step: only each Sync's ReadyForQuery counts.
                    if case .readyForQuery(let status) = message {
                        transactionStatus = status
                        abandon.syncsLeft -= 1
                        run.abandon = abandon
                        if abandon.syncsLeft <= 0 {
                            if abandon.requestSent { finish(run, .failure(abandon.error(stopped: true))) }
                            return
                        }
                    }
                    continue
                }
                try consume(message, into: &run.reader)
                if run.reader.done { return complete(run) }
            }
            guard updateInterest(for: run) else {
                throw .connectionLost("the worker cannot watch the socket of \(endpointText)")
            }
        } catch {
            failRun(run, error)
        }
    }

    /// Every Sync answered: the rows, the first segment's error, or once more after a stale prepared statement.
    private func complete(_ run: EpollRun) {
        guard let firstError = run.reader.firstError else { return finish(run, .success(run.reader.results)) }
        if !run.retried, staleStatement(firstError.error), firstError.segment == 0, transactionStatus == UInt8(ascii: "I") {
            // As on the queue path: the cache entries are gone, nothing of the first segment took effect, so the
            // pipeline runs once more, prepared afresh.
            run.retried = true
            return send(run)
        }
        finish(run, .failure(firstError.error))
    }

    /// A failure of the socket or the stream (or a refused run): a run being abandoned ends with its cancel not
    /// confirmed; else the session closes when the error leaves it out of step.
    private func failRun(_ run: EpollRun, _ error: PostgresError) {
        if let abandon = run.abandon {
            disconnect()
            return finish(run, .failure(abandon.error(stopped: false)))
        }
        if error.closesConnection { disconnect() }
        finish(run, .failure(error))
    }

    /// The deadline passed or the task was cancelled (on the worker): a pipeline not all written leaves the server
    /// waiting for its rest, so the session closes; else a CancelRequest, and the worker reads on to the
    /// ReadyForQuery of each unanswered Sync.
    private func abandon(_ run: EpollRun, cancelled: Bool) {
        guard run.abandon == nil else { return }
        guard run.written, fd >= 0, let endpoint, let worker else {
            disconnect()
            return finish(run, .failure(cancelled ? .cancelled(stopped: false) : .deadlineExceeded(cancelled: false)))
        }
        let grace = PostgresSocket.deadline(in: configuration.connectTimeout)
        run.abandon = Abandon(cancelled: cancelled, syncsLeft: max(1, run.segments.count - run.reader.results.count), grace: grace)
        arm(at: grace)
        let (processID, secretKey, tlsContext) = (processID, secretKey, tlsContext)
        // The CancelRequest's own connection blocks (connect, TLS): on the queue, never on the worker.
        queue.async {
            let sent: Bool
            do throws(PostgresError) {
                try Self.sendCancelRequest(to: endpoint, processID: processID, secretKey: secretKey, tls: tlsContext, deadline: grace)
                sent = true
            } catch {
                sent = false
            }
            worker.execute { self.cancelRequestDone(run, sent: sent) }
        }
    }

    /// The CancelRequest went out (or could not): the run ends once its Syncs are answered too. Until then it is not
    /// ended, so a late CancelRequest cannot stop a later run's statement.
    private func cancelRequestDone(_ run: EpollRun, sent: Bool) {
        guard exchange.withLock({ $0.awaiting === run }), var abandon = run.abandon else { return }
        guard sent else {
            disconnect()
            return finish(run, .failure(abandon.error(stopped: false)))
        }
        abandon.requestSent = true
        run.abandon = abandon
        if abandon.syncsLeft <= 0 { finish(run, .failure(abandon.error(stopped: true))) }
    }

    /// Sets the timer to fire at `deadline` unless it fires earlier already; on the worker.
    private func arm(at deadline: UInt64) {
        guard let worker else { return }
        let firesAt = exchange.withLock { $0.timerFiresAt }
        guard firesAt == 0 || deadline < firesAt else { return }
        if timer == nil { timer = worker.makeTimer { [weak self] in self?.timerFired() } }
        let now = PostgresSocket.now()
        timer?.schedule(after: deadline &- min(now, deadline))
        exchange.withLock { $0.timerFiresAt = max(deadline, 1) }
    }

    /// The timer fired: the run the worker holds is abandoned when due (or ends when its cancel's grace ran out),
    /// else the timer is set for it. With no run it stays unset until a run asks.
    private func timerFired() {
        let run = exchange.withLock { state -> EpollRun? in
            state.timerFiresAt = 0
            return state.awaiting
        }
        guard let run else { return }
        let now = PostgresSocket.now()
        if let abandon = run.abandon {
            guard now >= abandon.grace else { return arm(at: abandon.grace) }
            disconnect()
            finish(run, .failure(abandon.error(stopped: false)))
        } else if now >= run.deadline {
            abandon(run, cancelled: false)
        } else {
            arm(at: run.deadline)
        }
    }

    /// Ends `run` (by its owner): counts it, lets the session go (to the next waiting run, if any), resumes the task.
    private func finish(_ run: EpollRun, _ result: Result<[[PostgresRows]], PostgresError>) {
        let error: PostgresError?
        switch result {
        case .success: error = nil
        case .failure(let failure): error = failure
        }
        metrics.record(seconds: Double(PostgresSocket.now() &- run.started) / 1e9, error: error)
        let next = exchange.withLock { state -> EpollRun? in
            if state.awaiting === run { state.awaiting = nil }
            guard !state.waiting.isEmpty else {
                state.owned = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        run.continuation.resume(returning: result)
        if let next { begin(next) }
    }

    /// Lets the session go after the worker's idle check or a close: to the next waiting run, if any.
    private func release() {
        let next = exchange.withLock { state -> EpollRun? in
            guard !state.waiting.isEmpty else {
                state.owned = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        if let next { begin(next) }
    }

    /// ``close()`` on the worker path: Terminate and close when no run holds the session (one that does keeps it).
    func closeOnWorker(_ worker: HTTPWorker) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            worker.execute {
                let claimed = self.exchange.withLock { state -> Bool in
                    guard !state.owned else { return false }
                    state.owned = true
                    return true
                }
                if claimed {
                    if self.fd >= 0 {
                        var frontend = PostgresFrontend()
                        frontend.terminate()
                        // Best effort, without waiting: an idle session's socket takes 5 bytes.
                        _ = try? self.transmit(frontend.bytes, from: 0)
                    }
                    self.disconnect()
                    self.release()
                }
                continuation.resume()
            }
        }
    }
}

extension PostgresConnection: EpollMember {}
