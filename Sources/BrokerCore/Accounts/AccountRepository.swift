/// Durable storage of accounts by id; the file store and the Redis store pass one shared test suite.
///
/// Every failure is a ``StoreError``; the services turn it into
/// ``BrokerError/storageUnavailable(_:)`` with ``BrokerError/init(_:)``.
public protocol AccountRepository: Sendable {
    /// The account with `id`, or nil.
    func get(id: String) async throws(StoreError) -> Account?
    /// Stores `account` under its id, replacing any earlier record; returns only after the write is durable.
    func put(_ account: Account) async throws(StoreError)
    /// Removes the account with `id` and returns it, or returns nil when there was none.
    func delete(id: String) async throws(StoreError) -> Account?
    /// Every account, or those of one provider, sorted by id (UTF-8 byte order).
    func list(provider: String?) async throws(StoreError) -> [Account]
    /// Atomically reads, transforms and writes the account with `id`; a nil result deletes it (or writes nothing).
    ///
    /// Concurrent updates of one id are applied one after another, so none is lost.
    /// Returns the account as stored afterwards. An error thrown by `transform`
    /// propagates unchanged and changes nothing.
    func update(id: String, _ transform: @Sendable (Account?) throws(StoreError) -> Account?) async throws(StoreError) -> Account?
}
