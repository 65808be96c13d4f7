import BrokerCore

/// The PostgreSQL account repository with this replica's cache in front, kept coherent by `LISTEN`/`NOTIFY`.
///
/// Every write of ``PostgresAccountRepository`` notifies ``PostgresAccountRepository/channel`` with the account's id
/// right after its COMMIT, in the same round trip (``PostgresAccountRepository/notify(_:)``); each replica's
/// listener drops that account from its cache. Reads go through ``PostgresAccountCache`` while the listening session is up, and to
/// PostgreSQL otherwise; writes go to the base repository and drop the account here before they return, so a
/// replica always reads its own writes. Listings and pages always ask PostgreSQL. ``getNow(id:)`` answers from
/// memory, so the HTTP layer serves a cached account inline, as it does from the file store.
public final class CachingPostgresAccountRepository: AccountRepository, ImmediateAccountReading {
    /// The repository writes and uncached reads go to.
    public let base: PostgresAccountRepository
    /// The cache in front of it.
    public let cache: PostgresAccountCache
    private let listener: PostgresAccountListener

    /// Creates a repository caching up to `capacity` accounts of `base`; call ``start()`` to begin caching.
    public init(base: PostgresAccountRepository, capacity: Int) {
        self.base = base
        self.cache = PostgresAccountCache(capacity: capacity)
        self.listener = PostgresAccountListener(client: base.client, cache: cache)
    }

    /// Opens the listening session; until it is up every read asks PostgreSQL.
    public func start() { listener.start() }

    /// Closes it and stops caching.
    public func stop() { listener.stop() }

    /// Times the listening session came up.
    public var listenerConnects: UInt64 { listener.connects.load(ordering: .relaxed) }

    /// Itself: a cached account is served from memory.
    public var immediateReading: (any ImmediateAccountReading)? { self }
    /// The base's: PostgreSQL counts from the columns.
    public var statusCounting: (any AccountStatusCounting)? { base }

    /// The cached account, or nil when it is not cached (or known absent): the caller then asks ``get(id:)``.
    public func getNow(id: AccountID) -> Account? {
        cache.peek(id.string) ?? nil
    }

    /// The account with `id`: from the cache, else one read of its row.
    public func get(id: AccountID) async throws(StoreError) -> Account? {
        switch cache.lookup(id.string) {
        case .hit(let account):
            return account
        case .bypass:
            let account = try await base.get(id: id)
            cache.settle(id.string)
            return account
        case .miss(let ticket):
            do {
                let account = try await base.get(id: id)
                cache.fill(ticket, with: account)
                return account
            } catch {
                cache.abandon(ticket)
                throw error
            }
        }
    }

    public func put(_ account: Account) async throws(StoreError) {
        defer { cache.invalidate(account.id) }
        try await base.put(account)
    }

    public func delete(id: AccountID) async throws(StoreError) -> Account? {
        defer { cache.invalidate(id.string) }
        return try await base.delete(id: id)
    }

    public func list(provider: String?) async throws(StoreError) -> [Account] {
        try await base.list(provider: provider)
    }

    public func page(after: AccountID?, limit: Int, filter: AccountFilter) async throws(StoreError) -> AccountPage {
        try await base.page(after: after, limit: limit, filter: filter)
    }

    public func update(id: AccountID, _ transform: @Sendable (Account?) throws(StoreError) -> Account?) async throws(StoreError)
        -> Account?
    {
        defer { cache.invalidate(id.string) }
        return try await base.update(id: id, transform)
    }

    public func update(
        id: AccountID, reporting event: AccountChangeEvent, to sink: any EventSink,
        _ transform: @Sendable (Account?) throws(StoreError) -> Account?
    ) async throws(StoreError) -> Account? {
        defer { cache.invalidate(id.string) }
        return try await base.update(id: id, reporting: event, to: sink, transform)
    }
}
