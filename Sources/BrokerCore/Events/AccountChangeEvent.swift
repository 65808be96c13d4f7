/// The event an account change reports, decided from the account before the change and as stored after it (nil: absent).
///
/// Returns nil when the change reports nothing. A repository may call it more
/// than once for one update (Redis repeats a transaction that a concurrent
/// writer spoiled); only the call for the change that was applied is recorded.
public typealias AccountChangeEvent = @Sendable (_ before: Account?, _ after: Account?) -> (BrokerEventType, BrokerEventData)?

extension AccountRepository {
    /// Applies `transform` with ``update(id:_:)``, then records the event `event` finds in the change through `sink`.
    ///
    /// Two durable writes one after the other: a crash between them keeps the
    /// change and loses its event. This is what
    /// ``update(id:reporting:to:_:)`` does for a repository that cannot write
    /// both in one step, or a sink that writes to no outbox of its store.
    public func updateThenRecord(
        id: AccountID, reporting event: AccountChangeEvent, to sink: any EventSink,
        _ transform: @Sendable (Account?) throws(StoreError) -> Account?
    ) async throws(StoreError) -> Account? {
        let before = TransformWitness<Account?>(nil)
        let stored = try await update(id: id) { (current) throws(StoreError) -> Account? in
            before.value = current
            return try transform(current)
        }
        if let (type, data) = event(before.value, stored) { try await sink.record(type, data) }
        return stored
    }

    /// By default, ``updateThenRecord(id:reporting:to:_:)``: the change, then its event.
    public func update(
        id: AccountID, reporting event: AccountChangeEvent, to sink: any EventSink,
        _ transform: @Sendable (Account?) throws(StoreError) -> Account?
    ) async throws(StoreError) -> Account? {
        try await updateThenRecord(id: id, reporting: event, to: sink, transform)
    }
}
