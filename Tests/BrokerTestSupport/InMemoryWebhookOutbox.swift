import BrokerCore
import BrokerCrypto
import Foundation
import Synchronization

/// A ``WebhookOutbox`` in this process's memory, for tests whose subject is not storage.
///
/// It keeps the outbox's rules (earliest due first, one lease at a time,
/// holds, listing orders, replay) by walking every delivery on each call,
/// which is fine for a test's handful. Nothing is durable; leases are lost with the object.
public final class InMemoryWebhookOutbox: WebhookOutbox {
    private struct State {
        var deliveries: [String: WebhookDelivery] = [:]
        var leases: [String: (token: String, until: Date)] = [:]
        /// When a leased or set-aside delivery may be claimed again; cleared when it is stored anew.
        var postponed: [String: Date] = [:]
    }

    private let state = Mutex(State())

    /// An empty outbox.
    public init() {}

    private static func key(_ date: Date, _ id: String) -> (Int64, String) {
        (WebhookDelivery.milliseconds(date), id)
    }

    /// Stores `deliveries`, due at their next attempt.
    public func append(_ deliveries: [WebhookDelivery]) async throws(StoreError) {
        state.withLock { state in
            for delivery in deliveries {
                state.deliveries[delivery.id] = delivery
                state.postponed[delivery.id] = nil
            }
        }
    }

    /// Leases up to `limit` due deliveries, earliest due first, holding back those of receivers in `holding`.
    public func claim(
        limit: Int, now: Date, lease: Double, holding: [String: WebhookReceiverHold]
    ) async throws(StoreError) -> [WebhookLease] {
        guard limit > 0 else { return [] }
        return state.withLock { state in
            let due = state.deliveries.values.filter { $0.droppedAt == nil }
                .map { (due: state.postponed[$0.id] ?? $0.nextAttemptAt, delivery: $0) }
                .sorted { Self.key($0.due, $0.delivery.id) < Self.key($1.due, $1.delivery.id) }
            var allowance = holding.mapValues(\.leases)
            var chosen: [WebhookDelivery] = []
            for (at, delivery) in due {
                guard at <= now, chosen.count < limit else { break }
                if let held = state.leases[delivery.id], held.until > now { continue }
                if let hold = holding[delivery.url], delivery.enqueuedAt >= hold.windowEndedBefore {
                    guard let left = allowance[delivery.url], left > 0 else {
                        state.postponed[delivery.id] = max(hold.until, now.addingTimeInterval(0.001))
                        continue
                    }
                    allowance[delivery.url] = left - 1
                }
                chosen.append(delivery)
            }
            let until = now.addingTimeInterval(lease)
            return chosen.map { delivery in
                let token = SecureRandom.token(byteCount: 12)
                state.leases[delivery.id] = (token, until)
                state.postponed[delivery.id] = until
                return WebhookLease(delivery: delivery, token: token)
            }
        }
    }

    /// Forgets the delivery, whoever holds its lease.
    public func complete(_ lease: WebhookLease) async throws(StoreError) {
        state.withLock { state in
            let id = lease.delivery.id
            state.deliveries[id] = nil
            state.leases[id] = nil
            state.postponed[id] = nil
        }
    }

    /// Stores `updated` when the lease is still this one.
    public func reschedule(_ lease: WebhookLease, as updated: WebhookDelivery) async throws(StoreError) {
        settle(lease, as: updated)
    }

    /// Stores `updated` as dropped when the lease is still this one, then forgets dropped ones past their keeping.
    public func drop(_ lease: WebhookLease, as updated: WebhookDelivery) async throws(StoreError) {
        settle(lease, as: updated)
        let now = updated.droppedAt ?? Date()
        state.withLock { state in
            let dropped = state.deliveries.values.compactMap { d in d.droppedAt.map { ($0, d.id) } }.sorted { $0 > $1 }
            let cutoff = now.addingTimeInterval(-WebhookRetention.droppedFor)
            for (index, item) in dropped.enumerated() where index >= WebhookRetention.droppedCount || item.0 < cutoff {
                state.deliveries[item.1] = nil
            }
        }
    }

    private func settle(_ lease: WebhookLease, as updated: WebhookDelivery) {
        state.withLock { state in
            let id = lease.delivery.id
            guard state.leases[id]?.token == lease.token, state.deliveries[updated.id] != nil else { return }
            state.deliveries[updated.id] = updated
            state.leases[id] = nil
            state.postponed[id] = nil
        }
    }

    /// Pending deliveries earliest due first and dropped ones latest first, each from `cursor`.
    public func list(limit: Int, cursor: WebhookListCursor?) async throws(StoreError) -> WebhookOutboxListing {
        let limit = max(1, limit)
        return state.withLock { state in
            let all = Array(state.deliveries.values)
            var next = WebhookListCursor(pending: .end, dropped: .end)
            var pending: [WebhookDelivery] = []
            let pendingFrom = cursor?.pending ?? .start
            if pendingFrom != .end {
                var sorted = all.filter { $0.droppedAt == nil }
                    .sorted { Self.key($0.nextAttemptAt, $0.id) < Self.key($1.nextAttemptAt, $1.id) }
                if case .after(let milliseconds, let id) = pendingFrom {
                    sorted = sorted.filter { Self.key($0.nextAttemptAt, $0.id) > (milliseconds, id) }
                }
                pending = Array(sorted.prefix(limit))
                if sorted.count > limit, let last = pending.last {
                    next.pending = .after(milliseconds: WebhookDelivery.milliseconds(last.nextAttemptAt), id: last.id)
                }
            }
            var dropped: [WebhookDelivery] = []
            let droppedFrom = cursor?.dropped ?? .start
            if droppedFrom != .end {
                var sorted = all.filter { $0.droppedAt != nil }
                    .sorted { Self.key($0.droppedAt!, $0.id) > Self.key($1.droppedAt!, $1.id) }
                if case .after(let milliseconds, let id) = droppedFrom {
                    sorted = sorted.filter { Self.key($0.droppedAt!, $0.id) < (milliseconds, id) }
                }
                dropped = Array(sorted.prefix(limit))
                if sorted.count > limit, let last = dropped.last {
                    next.dropped = .after(milliseconds: WebhookDelivery.milliseconds(last.droppedAt!), id: last.id)
                }
            }
            return WebhookOutboxListing(
                pending: pending, dropped: dropped, stats: Self.stats(all),
                next: next == WebhookListCursor(pending: .end, dropped: .end) ? nil : next)
        }
    }

    /// Makes delivery `id`, or every delivery of event `id`, pending and due at `now` with no attempts.
    public func replay(id: String, now: Date) async throws(StoreError) -> Int {
        state.withLock { state in
            let ids = state.deliveries[id] != nil ? [id] : WebhookDelivery.ids(ofEvent: id)
            var count = 0
            for id in ids {
                guard var delivery = state.deliveries[id] else { continue }
                delivery.attempts = 0
                delivery.droppedAt = nil
                delivery.enqueuedAt = now
                delivery.nextAttemptAt = now
                state.deliveries[id] = delivery
                state.leases[id] = nil
                state.postponed[id] = nil
                count += 1
            }
            return count
        }
    }

    /// Counts of pending and dropped deliveries.
    public func stats() async throws(StoreError) -> WebhookOutboxStats {
        state.withLock { Self.stats(Array($0.deliveries.values)) }
    }

    private static func stats(_ all: [WebhookDelivery]) -> WebhookOutboxStats {
        let pending = all.filter { $0.droppedAt == nil }
        return WebhookOutboxStats(
            pending: pending.count, dropped: all.count - pending.count, oldestPendingEnqueuedAt: pending.map(\.enqueuedAt).min())
    }
}
