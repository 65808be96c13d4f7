import Foundation

/// When a failed webhook delivery is tried again, and when the broker gives up.
///
/// The n-th retry waits `base × 2^(n−1)`, at most `cap`, with jitter: a
/// uniformly random part of the second half of that wait, so receivers that
/// come back are not hit by every broker at the same moment. A delivery is
/// tried for `retryFor` seconds after it was enqueued; the last attempt is
/// made at that mark, and a failure after it drops the delivery.
public struct WebhookRetryPolicy: Sendable, Equatable {
    /// Seconds before the first retry (`BROKER_WEBHOOK_RETRY_BASE`).
    public var base: TimeInterval
    /// The longest wait between attempts (`BROKER_WEBHOOK_RETRY_CAP`).
    public var cap: TimeInterval
    /// Seconds after enqueueing during which attempts are made (`BROKER_WEBHOOK_RETRY_FOR`).
    public var retryFor: TimeInterval

    /// Creates a policy; the defaults retry from 10 s doubling to an hour, for a day.
    public init(base: TimeInterval = 10, cap: TimeInterval = 3600, retryFor: TimeInterval = 86_400) {
        self.base = base
        self.cap = max(base, cap)
        self.retryFor = retryFor
    }

    /// The wait after `attempts` failed attempts, before jitter: base × 2^(attempts − 1), at most the cap.
    public func delay(afterAttempts attempts: Int) -> TimeInterval {
        guard attempts > 0 else { return 0 }
        return min(cap, base * Double(1 << min(attempts - 1, 40)))
    }

    /// When to try `delivery` next after its `attempts`-th attempt failed at `now`, or nil to give up.
    ///
    /// `random` returns a number in [0, 1) and picks the jitter.
    public func nextAttempt(
        after delivery: WebhookDelivery, attempts: Int, now: Date,
        random: () -> Double
    ) -> Date? {
        let deadline = delivery.enqueuedAt.addingTimeInterval(retryFor)
        guard now < deadline else { return nil }
        let wait = delay(afterAttempts: attempts)
        let jittered = wait / 2 + wait / 2 * min(max(random(), 0), 1)
        return min(now.addingTimeInterval(jittered), deadline)
    }
}
