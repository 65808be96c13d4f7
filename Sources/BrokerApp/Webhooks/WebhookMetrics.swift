import BrokerCore
import Foundation
import Synchronization

/// Counts webhook attempts by event type and outcome, and renders them with the outbox's depth for `/metrics`.
///
/// Outcomes: `delivered` (2xx), `retry` (failed, tried again later), `dropped`
/// (failed for the last time, or its URL is no longer configured). The
/// outbox's depth and the age of its oldest pending delivery are read from the
/// store at each scrape, so with Redis they count every replica's events.
final class WebhookMetrics: Sendable {
    /// The outcomes counted, in the order they are rendered.
    static let outcomes = ["delivered", "retry", "dropped"]

    private let counts = Mutex<[String: [Int]]>([:])
    /// How many times a receiver went down.
    private let downs = Atomic<Int>(0)

    /// Creates counters at zero.
    init() {}

    /// Counts one attempt.
    func record(_ report: WebhookDispatcher.Report) {
        let outcome: Int
        switch report.result {
        case .delivered: outcome = 0
        case .retrying: outcome = 1
        case .dropped: outcome = 2
        }
        counts.withLock { table in
            var row = table[report.delivery.eventType] ?? [0, 0, 0]
            row[outcome] += 1
            table[report.delivery.eventType] = row
        }
    }

    /// Counts a receiver going down.
    func record(_ change: ReceiverHealth.Change) {
        if case .wentDown = change { downs.add(1, ordering: .relaxed) }
    }

    /// The count for `type` and `outcome` (one of ``outcomes``).
    func count(type: String, outcome: String) -> Int {
        guard let index = Self.outcomes.firstIndex(of: outcome) else { return 0 }
        return counts.withLock { $0[type]?[index] ?? 0 }
    }

    /// `broker_webhook_deliveries_total{type,outcome}`, `broker_webhook_receivers_down` (now) and
    /// `broker_webhook_receiver_down_total`, and from `stats` (nil when the store cannot be read)
    /// `broker_webhook_outbox_pending`, `broker_webhook_outbox_dropped` and `broker_webhook_outbox_oldest_pending_seconds`.
    func render(stats: WebhookOutboxStats?, receiversDown: Int, now: Date) -> String {
        var out = "# HELP broker_webhook_deliveries_total Webhook attempts by event type and outcome (delivered, retry, dropped).\n"
        out += "# TYPE broker_webhook_deliveries_total counter\n"
        for (type, row) in counts.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            for (index, outcome) in Self.outcomes.enumerated() {
                out += "broker_webhook_deliveries_total{type=\"\(MetricsRenderer.escape(type))\",outcome=\"\(outcome)\"} \(row[index])\n"
            }
        }
        out += MetricsRenderer.single(
            "broker_webhook_receivers_down", .gauge,
            "Webhook receivers not answering now, sent one delivery at a time until they do.", receiversDown)
        out += MetricsRenderer.single(
            "broker_webhook_receiver_down_total", .counter, "Times a webhook receiver stopped answering.",
            downs.load(ordering: .relaxed))
        guard let stats else { return out }
        let age = stats.oldestPendingEnqueuedAt.map { max(0, now.timeIntervalSince($0)) } ?? 0
        out += MetricsRenderer.single(
            "broker_webhook_outbox_pending", .gauge, "Webhook deliveries not yet delivered or dropped.", stats.pending)
        out += MetricsRenderer.single(
            "broker_webhook_outbox_dropped", .gauge, "Webhook deliveries given up on and kept for replay.", stats.dropped)
        out += MetricsRenderer.single(
            "broker_webhook_outbox_oldest_pending_seconds", .gauge,
            "Age of the oldest pending webhook delivery; 0 when none is pending.", String(format: "%.3f", age))
        return out
    }
}
