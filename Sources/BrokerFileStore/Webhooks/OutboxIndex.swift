import BrokerCore
import Foundation

/// The orders a ``JournalWebhookOutbox`` reads, kept up to date as each delivery changes, so that claiming,
/// settling, listing and counting cost O(log n) per delivery touched instead of a scan of the whole outbox.
///
/// Staged deliveries are in no order: they are neither claimed, listed nor counted.
struct OutboxIndex {
    /// A pending delivery by when a claim may take it, then when it was enqueued, then its id.
    struct DueKey: Comparable {
        var due: Date
        var enqueued: Date
        var id: String

        static func < (a: DueKey, b: DueKey) -> Bool { (a.due, a.enqueued, a.id) < (b.due, b.enqueued, b.id) }
    }

    /// A delivery by a time and its id.
    struct DatedKey: Comparable {
        var date: Date
        var id: String

        static func < (a: DatedKey, b: DatedKey) -> Bool { (a.date, a.id) < (b.date, b.id) }
    }

    /// A delivery by a time in whole milliseconds and its id: the order of listings and their cursors.
    struct ListKey: Comparable {
        var milliseconds: Int64
        var id: String

        static func < (a: ListKey, b: ListKey) -> Bool { (a.milliseconds, a.id) < (b.milliseconds, b.id) }
    }

    /// Pending deliveries by when a claim may take them: the next attempt, or the end of a lease or of a hold.
    private(set) var due = SortedKeys<DueKey>()
    /// The key of each pending delivery in ``due``.
    private var dueKeys: [String: DueKey] = [:]
    /// Pending deliveries by their stored next attempt: the listing's order.
    private(set) var pending = SortedKeys<ListKey>()
    /// Pending deliveries by when they were enqueued: the oldest for `/metrics`.
    private(set) var enqueued = SortedKeys<DatedKey>()
    /// Dropped deliveries by when they were dropped.
    private(set) var dropped = SortedKeys<ListKey>()

    /// An index of `entries`.
    init(_ entries: [String: OutboxJournal.Entry]) {
        for entry in entries.values { update(from: nil, to: entry) }
    }

    /// Moves a delivery from its keys as `old` (nil: absent) to its keys as `new` (nil: gone).
    mutating func update(from old: OutboxJournal.Entry?, to new: OutboxJournal.Entry?) {
        if let old, old.staged == nil {
            let d = old.delivery
            if let dropped = d.droppedAt {
                self.dropped.remove(ListKey(milliseconds: WebhookDelivery.milliseconds(dropped), id: d.id))
            } else {
                if let key = dueKeys.removeValue(forKey: d.id) { due.remove(key) }
                pending.remove(ListKey(milliseconds: WebhookDelivery.milliseconds(d.nextAttemptAt), id: d.id))
                enqueued.remove(DatedKey(date: d.enqueuedAt, id: d.id))
            }
        }
        if let new, new.staged == nil {
            let d = new.delivery
            if let dropped = d.droppedAt {
                self.dropped.insert(ListKey(milliseconds: WebhookDelivery.milliseconds(dropped), id: d.id))
            } else {
                let key = DueKey(due: d.nextAttemptAt, enqueued: d.enqueuedAt, id: d.id)
                due.insert(key)
                dueKeys[d.id] = key
                pending.insert(ListKey(milliseconds: WebhookDelivery.milliseconds(d.nextAttemptAt), id: d.id))
                enqueued.insert(DatedKey(date: d.enqueuedAt, id: d.id))
            }
        }
    }

    /// Makes pending delivery `id` claimable only from `date` on (a lease or a hold); its stored state is unchanged.
    mutating func postpone(_ id: String, until date: Date) {
        guard var key = dueKeys[id] else { return }
        due.remove(key)
        key.due = date
        due.insert(key)
        dueKeys[id] = key
    }
}
