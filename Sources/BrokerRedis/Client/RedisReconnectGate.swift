import Synchronization

/// The reconnect backoff one client's connections share, since they all reach the same server.
final class RedisReconnectGate: Sendable {
    private let backoff: Mutex<ReconnectBackoff>
    /// The monotonic clock backoff windows are measured on, in nanoseconds.
    let now: @Sendable () -> UInt64

    /// Creates a gate with `backoff` over the monotonic clock `now`.
    init(backoff: ReconnectBackoff = ReconnectBackoff(), now: @escaping @Sendable () -> UInt64 = RedisSocket.monotonicNow) {
        self.backoff = Mutex(backoff)
        self.now = now
    }

    /// Returns when a connect may be attempted; throws ``RedisError/unavailable(_:)`` at once inside a backoff window.
    func checkAttempt(endpoint: String) throws(RedisError) {
        let decision = backoff.withLock { $0.decide(now: now()) }
        switch decision {
        case .attempt:
            return
        case .failFast(let lastError, let delay):
            throw .unavailable("\(lastError); next connect to \(endpoint) in \(max(1, delay / 1_000_000)) ms")
        }
    }

    /// Records a failed connect or handshake.
    func recordFailure(_ message: String) {
        _ = backoff.withLock { $0.recordFailure(message, now: now()) }
    }

    /// Records a successful connect and handshake.
    func recordSuccess() {
        backoff.withLock { $0.recordSuccess() }
    }
}
