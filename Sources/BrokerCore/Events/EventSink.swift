/// Where the services report what happened to accounts and sign-ins, as the facts happen.
///
/// An implementation writes each event durably before it returns (the
/// webhook outbox), so a caller that answers its request afterwards never
/// acknowledges a change whose event could still be lost.
public protocol EventSink: Sendable {
    /// Records one event of `type` about `data`; returns once it survives a crash of the process.
    ///
    /// Events of types the operator did not ask for are accepted and dropped.
    func record(_ type: BrokerEventType, _ data: BrokerEventData) async throws(StoreError)
}
