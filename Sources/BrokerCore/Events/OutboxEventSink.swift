import BrokerCrypto
import Foundation

/// An ``EventSink`` that turns each event of a chosen type into one delivery per receiver URL in a ``WebhookOutbox``.
///
/// Ids come from the kernel's random source; `created_at` from the injected
/// clock the services use; the outbox's own times (when retries stop) from the
/// wall clock, which also drives the dispatcher. `onAppend` is told after each
/// durable append, so the dispatcher wakes at once instead of at its next poll.
public final class OutboxEventSink: EventSink {
    /// Where deliveries are written.
    public let outbox: any WebhookOutbox
    /// The receivers, in configuration order: delivery `<event id>.<n>` goes to `urls[n]`.
    public let urls: [String]
    /// The event types recorded; others are dropped here.
    public let types: Set<BrokerEventType>
    /// The services' clock, for `created_at`.
    let now: @Sendable () -> Date
    /// The wall clock, for when a delivery entered the outbox.
    let wallClock: @Sendable () -> Date
    /// Told after every append that wrote something.
    let onAppend: @Sendable () -> Void

    /// Creates a sink writing to `outbox` for `urls` (at most ``WebhookDelivery/maximumURLs``).
    public init(
        outbox: any WebhookOutbox, urls: [String], types: Set<BrokerEventType> = Set(BrokerEventType.allCases),
        now: @escaping @Sendable () -> Date, wallClock: @escaping @Sendable () -> Date = { Date() },
        onAppend: @escaping @Sendable () -> Void = {}
    ) {
        precondition(urls.count <= WebhookDelivery.maximumURLs, "OutboxEventSink: too many receiver URLs")
        self.outbox = outbox
        self.urls = urls
        self.types = types
        self.now = now
        self.wallClock = wallClock
        self.onAppend = onAppend
    }

    /// A fresh event id: `evt_` and 128 random bits in hex.
    public static func makeEventID() -> String {
        "evt_" + Hex.encode(SecureRandom.bytes(16))
    }

    /// Writes one delivery per URL for an event of a chosen type; returns once the outbox made them durable.
    public func record(_ type: BrokerEventType, _ data: BrokerEventData) async throws(StoreError) {
        let deliveries = deliveries(type, data)
        guard !deliveries.isEmpty else { return }
        try await outbox.append(deliveries)
        onAppend()
    }

    /// The outbox, for a repository that writes deliveries with the change they report.
    public var changeOutbox: (any WebhookOutbox)? { outbox }

    /// One delivery per URL for an event of a chosen type, under a fresh event id; none for other types.
    public func deliveries(_ type: BrokerEventType, _ data: BrokerEventData) -> [WebhookDelivery] {
        guard types.contains(type), !urls.isEmpty else { return [] }
        let event = BrokerEvent(id: Self.makeEventID(), type: type, createdAt: now(), data: data)
        let body = String(decoding: event.body(), as: UTF8.self)
        let enqueuedAt = wallClock()
        return urls.enumerated().map { index, url in
            WebhookDelivery(
                id: "\(event.id).\(index)", eventID: event.id, eventType: type.rawValue,
                accountID: data.accountID, url: url, body: body, enqueuedAt: enqueuedAt)
        }
    }

    /// Wakes the dispatcher.
    public func appended() {
        onAppend()
    }
}
