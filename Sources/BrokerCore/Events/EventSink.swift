/// Where the services report what happened to accounts and sign-ins, as the facts happen.
///
/// An implementation writes each event durably before it returns (the
/// webhook outbox), so a caller that answers its request afterwards never
/// acknowledges a change whose event could still be lost. An event about an
/// account change goes through ``AccountRepository/update(id:reporting:to:_:)``
/// instead, which writes it in the same step as the change, using
/// ``changeOutbox``, ``deliveries(_:_:)`` and ``appended()``.
public protocol EventSink: Sendable {
    /// Records one event of `type` about `data`; returns once it survives a crash of the process.
    ///
    /// Events of types the operator did not ask for are accepted and dropped.
    func record(_ type: BrokerEventType, _ data: BrokerEventData) async throws(StoreError)

    /// The outbox this sink writes to, for a repository that writes an event's deliveries with the change it reports;
    /// nil when the sink writes no outbox deliveries (it is then only told through ``record(_:_:)``).
    var changeOutbox: (any WebhookOutbox)? { get }

    /// The deliveries of one event, for the caller to write to ``changeOutbox``; empty when the type is not chosen.
    func deliveries(_ type: BrokerEventType, _ data: BrokerEventData) -> [WebhookDelivery]

    /// Told after deliveries from ``deliveries(_:_:)`` became durable (and were committed), so delivery can start.
    func appended()
}

extension EventSink {
    /// None: events go through ``record(_:_:)``.
    public var changeOutbox: (any WebhookOutbox)? { nil }

    /// None.
    public func deliveries(_ type: BrokerEventType, _ data: BrokerEventData) -> [WebhookDelivery] { [] }

    /// Nothing to tell.
    public func appended() {}
}
