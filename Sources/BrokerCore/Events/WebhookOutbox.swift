import Foundation

/// Durable storage of webhook deliveries until a receiver has taken them: the file journal or Redis.
///
/// Deliveries are appended when events are recorded, leased by a dispatcher
/// for one attempt at a time, then completed (removed), rescheduled, or
/// dropped (kept for listing and replay). A lease that its holder never
/// settles (the process died) runs out, and the delivery is due again: every
/// appended delivery is attempted until one attempt succeeds or it is dropped.
/// An outbox is an object: a repository knows its store's outbox by identity (`===`).
public protocol WebhookOutbox: AnyObject, Sendable {
    /// Stores `deliveries`, due at once; returns only once they survive `kill -9` (on the file store, power loss too).
    func append(_ deliveries: [WebhookDelivery]) async throws(StoreError)
    /// Leases up to `limit` deliveries due at `now` and not leased by anyone, for `lease` seconds, earliest due first.
    ///
    /// Deliveries to a URL in `holding` (a receiver that is down) are leased
    /// only up to its ``WebhookReceiverHold/leases``, except those whose retry
    /// window has ended (``WebhookReceiverHold/windowEndedBefore``); the rest found
    /// due are set aside until ``WebhookReceiverHold/until`` without any stored
    /// change, so the next claims do not meet them again before then. The cost
    /// of a claim grows with what it leases and sets aside, not with the backlog.
    func claim(
        limit: Int, now: Date, lease: Double, holding: [String: WebhookReceiverHold]
    ) async throws(StoreError) -> [WebhookLease]
    /// Removes the delivery: a receiver took it.
    func complete(_ lease: WebhookLease) async throws(StoreError)
    /// Stores `updated` (attempts, next attempt, last error) and gives up the lease; ignored when the lease was lost.
    func reschedule(_ lease: WebhookLease, as updated: WebhookDelivery) async throws(StoreError)
    /// Stores `updated` (with `droppedAt`) as given up; it stays listed until replayed or too old.
    func drop(_ lease: WebhookLease, as updated: WebhookDelivery) async throws(StoreError)
    /// A page of pending deliveries (earliest due first) and dropped ones (latest first), at most `limit` of each,
    /// each list from where `cursor` (a listing's ``WebhookOutboxListing/next``) left it, with the totals.
    func list(limit: Int, cursor: WebhookListCursor?) async throws(StoreError) -> WebhookOutboxListing
    /// Makes delivery `id`, or every delivery of event `id`, pending and due at `now` with no attempts counted; how many it found.
    func replay(id: String, now: Date) async throws(StoreError) -> Int
    /// How many are pending and dropped, and when the oldest pending one was enqueued.
    func stats() async throws(StoreError) -> WebhookOutboxStats
}

extension WebhookOutbox {
    /// Leases up to `limit` due deliveries to any receiver: ``claim(limit:now:lease:holding:)`` holding none back.
    public func claim(limit: Int, now: Date, lease: Double) async throws(StoreError) -> [WebhookLease] {
        try await claim(limit: limit, now: now, lease: lease, holding: [:])
    }

    /// The first page: at most `limit` pending and `limit` dropped deliveries.
    public func list(limit: Int) async throws(StoreError) -> WebhookOutboxListing {
        try await list(limit: limit, cursor: nil)
    }
}

/// How a claim treats the deliveries to a receiver that is down: at most a probe, the rest set aside.
public struct WebhookReceiverHold: Sendable, Equatable {
    /// How many of its due deliveries may be leased (1 for a probe, 0 while one is out or not yet due).
    public var leases: Int
    /// Until when the other due deliveries are set aside (not claimed); later than the claim's `now`.
    public var until: Date
    /// Deliveries enqueued before this have spent their retry window: they are leased anyway, to be dropped unsent.
    public var windowEndedBefore: Date

    /// Creates a hold.
    public init(leases: Int, until: Date, windowEndedBefore: Date) {
        self.leases = leases
        self.until = until
        self.windowEndedBefore = windowEndedBefore
    }
}

/// A delivery leased to one dispatcher for one attempt.
public struct WebhookLease: Sendable, Equatable {
    /// The delivery as it was leased.
    public var delivery: WebhookDelivery
    /// Proves the lease to the store when it is settled; a lease taken over by another dispatcher has another token.
    public var token: String

    /// Creates a lease.
    public init(delivery: WebhookDelivery, token: String) {
        self.delivery = delivery
        self.token = token
    }
}

/// What `webhooks list` shows.
public struct WebhookOutboxListing: Sendable, Equatable {
    /// Deliveries still to be attempted, earliest due first.
    public var pending: [WebhookDelivery]
    /// Deliveries given up, latest first.
    public var dropped: [WebhookDelivery]
    /// Counts, which may exceed what the lists hold.
    public var stats: WebhookOutboxStats
    /// Where the next page starts; nil when both lists ended on this one.
    public var next: WebhookListCursor?

    /// Creates a listing.
    public init(pending: [WebhookDelivery], dropped: [WebhookDelivery], stats: WebhookOutboxStats, next: WebhookListCursor? = nil) {
        self.pending = pending
        self.dropped = dropped
        self.stats = stats
        self.next = next
    }
}

/// The outbox's size, for `/metrics` and listings.
public struct WebhookOutboxStats: Sendable, Equatable {
    /// Deliveries still to be attempted (leased ones included).
    public var pending: Int
    /// Deliveries given up and kept.
    public var dropped: Int
    /// When the oldest pending delivery was enqueued; nil when none is pending.
    public var oldestPendingEnqueuedAt: Date?

    /// Creates stats.
    public init(pending: Int, dropped: Int, oldestPendingEnqueuedAt: Date?) {
        self.pending = pending
        self.dropped = dropped
        self.oldestPendingEnqueuedAt = oldestPendingEnqueuedAt
    }
}

/// How long the outboxes keep deliveries they gave up on, for listing and replay.
public enum WebhookRetention {
    /// Seconds a dropped delivery is kept.
    public static let droppedFor: TimeInterval = 7 * 86_400
    /// The most dropped deliveries kept; past it the oldest go first.
    public static let droppedCount = 10_000
}
