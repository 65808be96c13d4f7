import Foundation

extension RefreshCoordinator {
    /// When accounts are refreshed, how long the cross-replica lock is held and waited for, and how failures back off.
    public struct Policy: Sendable, Equatable {
        /// Seconds before expiry from which an account is refreshed (`BROKER_REFRESH_MARGIN`, default 300).
        public var margin: TimeInterval
        /// Seconds the lock lives if its holder dies; longer than one provider call plus two store round trips.
        public var lockTTL: Double
        /// Seconds between repository reads while another replica holds the lock.
        public var pollInterval: Double
        /// Seconds to wait after the first transient failure; each further failure doubles it.
        public var backoffBase: TimeInterval
        /// The longest wait between attempts after failures, unless the provider asks for longer.
        public var backoffCap: TimeInterval
        /// The longest wait a provider's `Retry-After` can impose; longer values are clamped to it (default one hour).
        public var retryAfterCap: TimeInterval
        /// The shortest wait after any failed refresh of an account, so that readers of a failing account in a loop
        /// cause at most one provider call per this many seconds (default 30); it lives in the shared backoff, so it holds across replicas.
        public var cooldown: TimeInterval
        /// Seconds of transient failures without a success after which an account becomes `refresh_exhausted`
        /// (`BROKER_REFRESH_GIVE_UP`, default four days).
        public var giveUp: TimeInterval

        /// Seconds a shared backoff entry outlives its backoff, so that failures keep counting across the next try.
        public static let backoffKeep: TimeInterval = 300
        /// Seconds after a refresh during which a forced refresh hands out that refresh's token instead of calling the provider again.
        public static let forcedRefreshReuse: TimeInterval = 10
        /// The default ``giveUp``: four days.
        public static let defaultGiveUp: TimeInterval = 4 * 86_400

        /// Creates a policy; the defaults suit a 10-second upstream timeout.
        public init(
            margin: TimeInterval = 300, lockTTL: Double = 30, pollInterval: Double = 0.05,
            backoffBase: TimeInterval = 10, backoffCap: TimeInterval = 300, retryAfterCap: TimeInterval = 3600,
            cooldown: TimeInterval = 30, giveUp: TimeInterval = Policy.defaultGiveUp
        ) {
            self.margin = margin
            self.lockTTL = lockTTL
            self.pollInterval = pollInterval
            self.backoffBase = backoffBase
            self.backoffCap = backoffCap
            self.retryAfterCap = max(0, retryAfterCap)
            self.cooldown = max(0, cooldown)
            self.giveUp = max(0, giveUp)
        }

        /// The wait after `failures` consecutive transient failures: base × 2^(failures − 1), at most the cap.
        public func backoffDelay(afterFailures failures: Int) -> TimeInterval {
            guard failures > 0 else { return 0 }
            let factor = Double(1 << min(failures - 1, 30))
            return min(backoffCap, backoffBase * factor)
        }

        /// The backoff after one more transient `failure` at `at`, following `previous`: the latest of the exponential
        /// backoff, `atLeast` seconds and the provider's `Retry-After` (RFC 9110 §10.2.3), the latter clamped to
        /// ``retryAfterCap``; a `Retry-After` that does not parse is ignored. The run's first failure is `previous`'s,
        /// or `at` when this one starts the run (or `previous` came from a version that did not keep it).
        func backoff(after previous: RefreshBackoff?, failing failure: RefreshFailure, at: Date, atLeast: TimeInterval = 0)
            -> RefreshBackoff
        {
            let failures = min(previous?.failures ?? 0, 1_000) + 1
            var delay = max(backoffDelay(afterFailures: failures), atLeast)
            if let asked = retryAfter(of: failure, at: at) { delay = max(delay, asked) }
            return RefreshBackoff(
                failures: failures, notBefore: at.addingTimeInterval(delay), lastError: failure.error,
                firstFailureAt: previous?.firstFailureAt ?? at)
        }

        /// Whether a run of failures that began at `firstFailureAt` has lasted the give-up period at `now`.
        func hasGivenUp(failingSince firstFailureAt: Date?, at now: Date) -> Bool {
            guard let firstFailureAt else { return false }
            return now.timeIntervalSince(firstFailureAt) >= giveUp
        }

        /// The seconds `failure`'s `Retry-After` (RFC 9110 §10.2.3) asks to wait from `at`, clamped to ``retryAfterCap``;
        /// nil when there was none or it does not parse.
        func retryAfter(of failure: RefreshFailure, at: Date) -> TimeInterval? {
            guard let field = failure.retryAfter, let asked = RetryAfter.delay(field, at: at) else { return nil }
            return min(retryAfterCap, asked)
        }
    }
}
