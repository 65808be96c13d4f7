import Synchronization

/// A fixed set of connections lent to one task at a time; tasks wait (suspended) for a free one in arrival order.
///
/// A lease covers several exchanges, which a `WATCH`/`MULTI`/`EXEC` transaction
/// needs: no other task's command can land on the connection in between.
final class RedisConnectionPool: Sendable {
    private struct State {
        /// Connections nobody holds, the most recently used last.
        var idle: [RedisConnection]
        /// Tasks waiting for a connection, in arrival order.
        var waiters: [CheckedContinuation<RedisConnection, Never>] = []
    }

    /// Every connection of the pool.
    let connections: [RedisConnection]
    private let state: Mutex<State>
    /// Where waits for a connection are counted.
    let metrics: RedisMetrics

    /// Creates `size` closed connections to `target` sharing `gate`.
    init(target: RedisTarget, size: Int, timeout: Double, gate: RedisReconnectGate, metrics: RedisMetrics = RedisMetrics()) {
        let connections = (0..<max(1, size)).map {
            RedisConnection(target: target, timeout: timeout, gate: gate, label: "token-broker.redis.\($0)", metrics: metrics)
        }
        self.connections = connections
        self.metrics = metrics
        self.state = Mutex(State(idle: connections))
    }

    /// Runs `body` with a connection no other task holds meanwhile.
    func lease<T, E: Error>(_ body: (RedisConnection) async throws(E) -> T) async throws(E) -> T {
        let connection = await acquire()
        defer { release(connection) }
        return try await body(connection)
    }

    private func acquire() async -> RedisConnection {
        let free = state.withLock { $0.idle.popLast() }
        if let free { return free }
        let started = RedisSocket.monotonicNow()
        defer { metrics.recordPoolWait(nanoseconds: RedisSocket.monotonicNow() - started) }
        return await withCheckedContinuation { (continuation: CheckedContinuation<RedisConnection, Never>) in
            let free = state.withLock { state -> RedisConnection? in
                if let connection = state.idle.popLast() { return connection }
                state.waiters.append(continuation)
                return nil
            }
            if let free { continuation.resume(returning: free) }
        }
    }

    private func release(_ connection: RedisConnection) {
        let waiter = state.withLock { state -> CheckedContinuation<RedisConnection, Never>? in
            guard !state.waiters.isEmpty else {
                state.idle.append(connection)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume(returning: connection)
    }
}
