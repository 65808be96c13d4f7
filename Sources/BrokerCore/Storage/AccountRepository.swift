/// Durable storage of accounts by id; the file store and the Redis store pass one shared test suite.
///
/// Every failure is a ``StoreError``; the services turn it into
/// ``BrokerError/storageUnavailable(_:)`` with ``BrokerError/init(_:)``.
public protocol AccountRepository: Sendable {
    /// The account with `id`, or nil.
    func get(id: AccountID) async throws(StoreError) -> Account?
    /// Stores `account` under its id, replacing any earlier record; returns only after the write is durable.
    func put(_ account: Account) async throws(StoreError)
    /// Removes the account with `id` and returns it, or returns nil when there was none.
    func delete(id: AccountID) async throws(StoreError) -> Account?
    /// Every account, or those of one provider, sorted by id (UTF-8 byte order).
    func list(provider: String?) async throws(StoreError) -> [Account]
    /// Up to `limit` (≥ 1) accounts passing `filter` whose id sorts after `after` (nil: from the start), sorted by id
    /// (UTF-8 byte order), and the `after` of the next page when more may follow.
    ///
    /// Paging by id keeps every account that exists throughout on exactly one
    /// page, however many are added or removed meanwhile. A default that
    /// filters ``list(provider:)`` in memory exists (``AccountPage/slice(_:after:limit:filter:)``).
    func page(after: AccountID?, limit: Int, filter: AccountFilter) async throws(StoreError) -> AccountPage
    /// Atomically reads, transforms and writes the account with `id`; a nil result deletes it (or writes nothing).
    ///
    /// Concurrent updates of one id are applied one after another, so none is lost.
    /// Returns the account as stored afterwards. An error thrown by `transform`
    /// propagates unchanged and changes nothing.
    func update(id: AccountID, _ transform: @Sendable (Account?) throws(StoreError) -> Account?) async throws(StoreError) -> Account?

    /// Like ``update(id:_:)``, and records the event that `event` finds in the change through `sink`, in the same durable step.
    ///
    /// After a crash at any moment either both the change and its event were
    /// written, or neither was: the Redis store puts the outbox entries in the
    /// account's `MULTI`/`EXEC`; the file store stages them in its outbox journal
    /// before the account write and commits them after (see `JournalWebhookOutbox`).
    /// When the account is unchanged, an event found is recorded on its own.
    /// The default implementation records after the change
    /// (``updateThenRecord(id:reporting:to:_:)``), so a crash between the two can lose the event.
    func update(
        id: AccountID, reporting event: AccountChangeEvent, to sink: any EventSink,
        _ transform: @Sendable (Account?) throws(StoreError) -> Account?
    ) async throws(StoreError) -> Account?

    /// This repository's reads served at once from memory, or nil when every read suspends (the default).
    var immediateReading: (any ImmediateAccountReading)? { get }
    /// This repository's cheap counts by status for `/metrics`, or nil when it cannot count without reading every record (the default).
    var statusCounting: (any AccountStatusCounting)? { get }
}

extension AccountRepository {
    /// None: every read suspends.
    public var immediateReading: (any ImmediateAccountReading)? { nil }
    /// None: the accounts are not counted.
    public var statusCounting: (any AccountStatusCounting)? { nil }
}
