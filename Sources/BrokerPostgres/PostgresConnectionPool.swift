import BrokerTLS
import Synchronization

/// A bounded set of connections lent to one task at a time; tasks wait (suspended) in arrival order, each until
/// its deadline.
///
/// The pool never holds more than `size` connections, so the server never sees more sessions from it.
/// A connection whose session broke is lent again like any other and reopens its session on its next statement.
final class PostgresConnectionPool: Sendable {
    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<PostgresConnection?, Never>
    }

    private struct State {
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
    }

    /// Every connection of the pool.
    let connections: [PostgresConnection]
    /// The SCRAM keys the connections share.
    let scramKeys: SCRAMKeyCache
    /// Round trips and errors of every connection.
    let metrics: PostgresMetrics
    /// The TLS settings every session of this client uses (the pool's and the cache's listening one), or nil.
    let tls: TLSContext?
    private let state: Mutex<State>

    /// Creates `size` closed connections, sharing `tls` when the sessions use TLS.
    init(configuration: PostgresConfiguration, tls: TLSContext? = nil) {
        let keys = SCRAMKeyCache()
        let metrics = PostgresMetrics()
        let connections = (0..<max(1, configuration.poolSize)).map {
            PostgresConnection(
                configuration: configuration, label: "token-broker.postgres.\($0)", scramKeys: keys, metrics: metrics, tls: tls)
        }
        self.metrics = metrics
        self.tls = tls
        self.scramKeys = keys
        self.connections = connections
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
        let free = state.withLock { state -> PostgresConnection? in
            guard let connection = state.idle.popLast() else { return nil }
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
        // The wait ends at the deadline: a timer removes the waiter (if still waiting) and resumes it with nil.
        let timer = Task { [weak self] in
            let now = PostgresSocket.now()
            if deadline > now { try? await Task.sleep(nanoseconds: deadline - now) }
            self?.expire(id)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<PostgresConnection?, Never>) in
                let (free, waiting) = state.withLock { state -> (PostgresConnection?, Bool) in
                    if let connection = state.idle.popLast() {
                        state.inUse += 1
                        state.highWater = max(state.highWater, state.inUse)
                        return (connection, false)
                    }
                    // The task's cancelled flag is set before its handler runs, and the handler takes this lock:
                    // either the handler finds this waiter, or this finds the flag.
                    if Task.isCancelled { return (nil, false) }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return (nil, true)
                }
                if !waiting { continuation.resume(returning: free) }
            }
        } onCancel: {
            self.expire(id, countAsTimeout: false)
        }
    }

    private func expire(_ id: Int, countAsTimeout: Bool = true) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            if countAsTimeout { state.timeouts += 1 }
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
