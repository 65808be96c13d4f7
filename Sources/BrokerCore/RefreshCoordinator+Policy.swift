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
        /// The longest wait between attempts after failures.
        public var backoffCap: TimeInterval

        /// Creates a policy; the defaults suit a 10-second upstream timeout.
        public init(margin: TimeInterval = 300, lockTTL: Double = 30, pollInterval: Double = 0.05,
                    backoffBase: TimeInterval = 10, backoffCap: TimeInterval = 300) {
            self.margin = margin
            self.lockTTL = lockTTL
            self.pollInterval = pollInterval
            self.backoffBase = backoffBase
            self.backoffCap = backoffCap
        }

        /// The wait after `failures` consecutive transient failures: base × 2^(failures − 1), at most the cap.
        public func backoffDelay(afterFailures failures: Int) -> TimeInterval {
            guard failures > 0 else { return 0 }
            let factor = Double(1 << min(failures - 1, 30))
            return min(backoffCap, backoffBase * factor)
        }
    }

    /// Transient failures of one account in a row, and when it may be tried again.
    struct Backoff: Sendable {
        /// Consecutive transient failures.
        var failures: Int
        /// The earliest time of the next attempt that respects backoff.
        var notBefore: Date
    }

    /// Counts a transient failure of `accountID` and pushes its next attempt back.
    func recordTransientFailure(accountID: String) {
        let failures = (backoff[accountID]?.failures ?? 0) + 1
        backoff[accountID] = Backoff(failures: failures, notBefore: now().addingTimeInterval(policy.backoffDelay(afterFailures: failures)))
    }

    /// Forgets `accountID`'s failures after a success or a final answer.
    func clearBackoff(accountID: String) {
        backoff[accountID] = nil
    }
}
