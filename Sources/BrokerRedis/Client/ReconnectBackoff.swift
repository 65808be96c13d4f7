/// When a pool may try to connect to Redis again: exponential backoff after failures, capped.
///
/// A pure state machine over a monotonic clock in nanoseconds. While Redis is
/// down, calls inside the waiting window fail at once instead of each paying a
/// connect attempt; the first call after the window tries again. The first
/// failure waits `initialDelay`, each further one twice as long, up to `maximumDelay`.
struct ReconnectBackoff: Sendable {
    /// Whether connecting has been failing.
    ///
    /// Legal transitions: `healthy → failing(1)` on a failure, `failing(n) → failing(n + 1)`
    /// on another, and either `→ healthy` on a success.
    enum State: Sendable, Equatable {
        /// The last attempt succeeded (or none was made): connect freely.
        case healthy
        /// This many attempts in a row failed, the last with `lastError`; the next may start at `retryAt`.
        case failing(failures: Int, retryAt: UInt64, lastError: String)
    }

    /// What a caller about to connect should do.
    enum Decision: Sendable, Equatable {
        /// Try to connect.
        case attempt
        /// Fail at once: the server was unreachable (`lastError`) and the next attempt may start in `delay` nanoseconds.
        case failFast(lastError: String, delay: UInt64)
    }

    /// The wait after the first failure, in nanoseconds.
    let initialDelay: UInt64
    /// The longest wait, in nanoseconds.
    let maximumDelay: UInt64
    /// The current state.
    private(set) var state: State = .healthy

    /// Creates a backoff waiting 50 ms after the first failure and at most 2 s, unless told otherwise.
    init(initialDelay: UInt64 = 50_000_000, maximumDelay: UInt64 = 2_000_000_000) {
        self.initialDelay = initialDelay
        self.maximumDelay = max(initialDelay, maximumDelay)
    }

    /// Whether a connect may be attempted at `now`.
    func decide(now: UInt64) -> Decision {
        switch state {
        case .healthy:
            return .attempt
        case .failing(_, let retryAt, let lastError):
            return now >= retryAt ? .attempt : .failFast(lastError: lastError, delay: retryAt - now)
        }
    }

    /// Records a failed connect at `now`; returns the wait before the next attempt.
    @discardableResult
    mutating func recordFailure(_ message: String, now: UInt64) -> UInt64 {
        let failures: Int
        switch state {
        case .healthy: failures = 1
        case .failing(let count, _, _): failures = count + 1
        }
        let delay = delay(afterFailures: failures)
        state = .failing(failures: failures, retryAt: now + delay, lastError: message)
        return delay
    }

    /// Records a successful connect: the next failure starts the backoff from the beginning.
    mutating func recordSuccess() {
        state = .healthy
    }

    /// `initialDelay · 2^(failures − 1)`, capped at `maximumDelay`.
    func delay(afterFailures failures: Int) -> UInt64 {
        let doublings = min(max(failures - 1, 0), 40)
        let (delay, overflow) = initialDelay.multipliedReportingOverflow(by: 1 << UInt64(doublings))
        return overflow ? maximumDelay : min(delay, maximumDelay)
    }
}
