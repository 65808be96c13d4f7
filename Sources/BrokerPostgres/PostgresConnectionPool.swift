import BrokerHTTP
import BrokerTLS
import Synchronization

/// A bounded set of connections lent to one task at a time; tasks wait (suspended) in arrival order, each until
/// its deadline.
///
/// The pool never holds more than `size` connections, so the server never sees more sessions from it.
/// A connection whose session broke is lent again like any other and reopens its session on its next statement.
final class PostgresConnectionPool: Sendable {
    fileprivate struct Waiter {
        let id: Int
        /// When the wait ends with no connection (monotonic nanoseconds).
        let deadline: UInt64
        let continuation: CheckedContinuation<PostgresConnection?, Never>
    }

    fileprivate struct State {
        /// Connections nobody holds, the most recently used last.
        var idle: [PostgresConnection]
        /// Tasks waiting for a connection, in arrival order.
        var waiters: [Waiter] = []
        var nextWaiterID = 0
        /// Connections lent now, and the most ever lent at once.
        var inUse = 0
        var highWater = 0
        /// Leases that had to wait, and waits that ran out.
        var waits = 0
        var timeouts = 0
        /// The one timer of the pool while tasks wait: it sleeps until `timerDeadline` (the earliest waiter's
        /// deadline when it started), ends the waits past their deadline, and sleeps again while any task waits.
        /// One timer for all waits, not a task and a dispatch timer per wait: under load most leases wait.
        var timer: Task<Void, Never>?
        var timerDeadline: UInt64 = 0
        /// Which timer is current: a timer replaced by one for an earlier deadline ends without touching the state.
        var timerGeneration = 0
    }

    /// Every connection of the pool.
    let connections: [PostgresConnection]
    /// The epoll workers the connections' round trips run on.
    private let workers: [HTTPWorker]
    /// The SCRAM keys the connections share.
    let scramKeys: SCRAMKeyCache
    /// Round trips and errors of every connection.
    let metrics: PostgresMetrics
    /// The TLS settings every session of this client uses (the pool's and the cache's listening one), or nil.
    let tls: TLSContext?
    private let state: Mutex<State>

    /// Creates `size` closed connections, sharing `tls` when the sessions use TLS. Their round trips run on the
    /// process's HTTP epoll workers, spread round robin, the same threads that serve the requests waiting for them.
    init(configuration: PostgresConfiguration, tls: TLSContext? = nil) {
        let keys = SCRAMKeyCache()
        let metrics = PostgresMetrics()
        let connections = (0..<max(1, configuration.poolSize)).map {
            PostgresConnection(
                configuration: configuration, label: "token-broker.postgres.\($0)", scramKeys: keys, metrics: metrics, tls: tls,
                worker: HTTPEventLoops.shared.next())
        }
        self.metrics = metrics
        self.tls = tls
        self.scramKeys = keys
        self.connections = connections
        self.workers = HTTPEventLoops.shared.workers
        self.state = Mutex(State(idle: connections))
    }

    /// Runs `body` with a connection no other task holds meanwhile, waiting for one until `deadline`.
    func lease<T>(
        deadline: UInt64, _ body: (PostgresConnection) async throws(PostgresError) -> T
    ) async throws(PostgresError) -> T {
        guard let connection = await acquire(deadline: deadline) else {
            // Nothing ran: a cancelled task's wait ended early, any other at its deadline.
            let error: PostgresError = Task.isCancelled ? .cancelled(stopped: true) : .poolExhausted
            metrics.record(error)
            throw error
        }
        defer { release(connection) }
        return try await body(connection)
    }

    /// Use figures: size, lent now, most ever lent at once, leases that waited, waits that ran out.
    var statistics: PostgresPoolStatistics {
        state.withLock {
            PostgresPoolStatistics(
                size: connections.count, inUse: $0.inUse, highWater: $0.highWater, waits: $0.waits, timeouts: $0.timeouts)
        }
    }

    private func acquire(deadline: UInt64) async -> PostgresConnection? {
        // A task running on an epoll worker (an `onWorker` route's handler) takes an idle connection of that worker
        // first: the worker reads the answer and resumes the task on its own thread, with no wake-up between them.
        let here = workers.first { $0.isCurrent }
        let free = state.withLock { state -> PostgresConnection? in
            guard let connection = state.takeIdle(preferring: here) else { return nil }
            state.inUse += 1
            state.highWater = max(state.highWater, state.inUse)
            return connection
        }
        if let free { return free }
        let id = state.withLock { state -> Int in
            state.nextWaiterID += 1
            state.waits += 1
            return state.nextWaiterID
        }
        // The wait ends at the deadline: the pool's timer removes the waiter (if still waiting) and resumes it with nil.
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<PostgresConnection?, Never>) in
                let (free, waiting) = state.withLock { state -> (PostgresConnection?, Bool) in
                    if let connection = state.takeIdle(preferring: here) {
                        state.inUse += 1
                        state.highWater = max(state.highWater, state.inUse)
                        return (connection, false)
                    }
                    // The task's cancelled flag is set before its handler runs, and the handler takes this lock:
                    // either the handler finds this waiter, or this finds the flag.
                    if Task.isCancelled { return (nil, false) }
                    state.waiters.append(Waiter(id: id, deadline: deadline, continuation: continuation))
                    if state.timer == nil || deadline < state.timerDeadline { startTimer(&state, until: deadline) }
                    return (nil, true)
                }
                if !waiting { continuation.resume(returning: free) }
            }
        } onCancel: {
            self.cancelWait(id)
        }
    }

    /// Starts the pool's timer for `deadline` (under the state's lock), replacing one that sleeps longer.
    private func startTimer(_ state: inout State, until deadline: UInt64) {
        state.timer?.cancel()
        state.timerGeneration += 1
        state.timerDeadline = deadline
        let generation = state.timerGeneration
        state.timer = Task { [weak self] in
            var until = deadline
            while true {
                let now = PostgresSocket.now()
                if until > now {
                    do { try await Task.sleep(nanoseconds: until - now) } catch { return }
                }
                // Weak across the sleeps: a pool nobody holds is not kept alive by its timer.
                guard let next = self?.expireDue(generation: generation) else { return }
                until = next
            }
        }
    }

    /// Ends the waits past their deadline; returns the next deadline to sleep until, or nil when no task waits
    /// (or `generation` is no longer the current timer).
    private func expireDue(generation: Int) -> UInt64? {
        let now = PostgresSocket.now()
        let (due, next) = state.withLock { state -> ([Waiter], UInt64?) in
            guard state.timerGeneration == generation else { return ([], nil) }
            let due = state.waiters.filter { $0.deadline <= now }
            if !due.isEmpty {
                state.waiters.removeAll { $0.deadline <= now }
                state.timeouts += due.count
            }
            guard let next = state.waiters.map(\.deadline).min() else {
                state.timer = nil
                return (due, nil)
            }
            state.timerDeadline = next
            return (due, next)
        }
        for waiter in due { waiter.continuation.resume(returning: nil) }
        return next
    }

    /// Ends the wait of a cancelled task (not counted as a timeout).
    private func cancelWait(_ id: Int) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: nil)
    }

    private func release(_ connection: PostgresConnection) {
        let waiter = state.withLock { state -> Waiter? in
            guard !state.waiters.isEmpty else {
                state.idle.append(connection)
                state.inUse -= 1
                return nil
            }
            // Handed straight to the next waiter: still in use.
            return state.waiters.removeFirst()
        }
        waiter?.continuation.resume(returning: connection)
    }
}

extension PostgresConnectionPool.State {
    /// An idle connection, the most recently used first, one of `worker`'s when there is one.
    mutating func takeIdle(preferring worker: HTTPWorker?) -> PostgresConnection? {
        if let worker, let index = idle.lastIndex(where: { $0.worker === worker }) { return idle.remove(at: index) }
        return idle.popLast()
    }
}

/// How a ``PostgresClient``'s pool is used.
public struct PostgresPoolStatistics: Sendable, Equatable {
    /// The most connections the pool holds.
    public var size: Int
    /// Connections lent now.
    public var inUse: Int
    /// The most connections ever lent at once.
    public var highWater: Int
    /// Leases that found no free connection and waited.
    public var waits: Int
    /// Waits that ended at their deadline with no connection.
    public var timeouts: Int
}
