import BrokerCore

/// The Redis account repository with a client-side cache in front: reads of unchanged accounts cost no round trip.
///
/// Reads go through ``RedisAccountCache``; a miss is one pipelined
/// `CLIENT CACHING yes` + `GET` on a tracked connection. Writes go to
/// ``RedisAccountRepository`` unchanged, and drop the account from this
/// replica's cache before they return, so a replica always reads its own
/// writes; every other replica hears of the write from Redis. `list` always
/// asks Redis. ``getNow(id:)`` answers from memory, so the HTTP layer serves
/// a cached account inline, as it does from the file store.
public final class CachingRedisAccountRepository: AccountRepository, ImmediateAccountReading {
    /// The repository writes and uncached reads go to.
    public let base: RedisAccountRepository
    /// The cache in front of it.
    public let cache: RedisAccountCache

    /// Creates a repository caching up to `capacity` accounts of `base`; call ``start()`` to begin caching.
    public init(base: RedisAccountRepository, capacity: Int) {
        self.base = base
        self.cache = RedisAccountCache(capacity: capacity, accountKeyPrefix: base.accountKey(""), metrics: base.client.metrics)
    }

    /// Opens the invalidation connection; until it is subscribed every read asks Redis.
    public func start() {
        cache.start(target: base.client.target, timeout: base.client.timeout)
    }

    /// Closes the invalidation connection and stops caching.
    public func stop() {
        cache.stop()
    }

    /// Itself: a cached account is served from memory.
    public var immediateReading: (any ImmediateAccountReading)? { self }

    /// The cached account, or nil when it is not cached (or known absent): the caller then asks ``get(id:)``.
    public func getNow(id: String) -> Account? {
        cache.peek(id) ?? nil
    }

    /// The account with `id`: from the cache, else one tracked read.
    public func get(id: String) async throws(StoreError) -> Account? {
        switch cache.lookup(id) {
        case .hit(let account):
            return account
        case .bypass:
            // Another read of this id may be in flight, its GET sent before ours: once ours has seen
            // what may be a newer value, that read must not fill (nor a different value stay), or a
            // later hit here could return something older than what this read returned.
            do {
                let account = try await base.get(id: id)
                cache.settle(id, seen: account)
                return account
            } catch {
                cache.forget(id)
                throw error
            }
        case .miss(let ticket):
            do {
                let key = base.accountKey(id)
                let commands = [RedisCommand("CLIENT", "CACHING", "yes"), RedisCommand("GET", key)]
                let (replies, tracked) = try await base.run { () async throws(RedisError) in
                    try await self.base.client.pool.lease { (connection) async throws(RedisError) in
                        try await connection.sendTracked(commands, redirect: ticket.redirect)
                    }
                }
                let account = try base.decode(replies[1], key: key)
                if tracked, replies[0] == .simpleString("OK") {
                    cache.fill(ticket, with: account)
                } else {
                    cache.abandon(ticket, seen: account)
                }
                return account
            } catch {
                cache.abandon(ticket)
                throw error
            }
        }
    }

    /// Writes `account`; see ``RedisAccountRepository/put(_:)``.
    public func put(_ account: Account) async throws(StoreError) {
        defer { cache.forget(account.id) }
        try await base.put(account)
    }

    /// Deletes the account; see ``RedisAccountRepository/delete(id:)``.
    public func delete(id: String) async throws(StoreError) -> Account? {
        defer { cache.forget(id) }
        return try await base.delete(id: id)
    }

    /// Lists accounts from Redis; see ``RedisAccountRepository/list(provider:)``.
    public func list(provider: String?) async throws(StoreError) -> [Account] {
        try await base.list(provider: provider)
    }

    /// One page of accounts from Redis; see ``RedisAccountRepository/page(after:limit:filter:)``.
    public func page(after: String?, limit: Int, filter: AccountFilter) async throws(StoreError) -> AccountPage {
        try await base.page(after: after, limit: limit, filter: filter)
    }

    /// Updates the account; see ``RedisAccountRepository/update(id:_:)``.
    public func update(id: String, _ transform: @Sendable (Account?) throws(StoreError) -> Account?) async throws(StoreError) -> Account? {
        defer { cache.forget(id) }
        return try await base.update(id: id, transform)
    }

    /// Updates the account with its event in one transaction; see ``RedisAccountRepository/update(id:reporting:to:_:)``.
    public func update(
        id: String, reporting event: AccountChangeEvent, to sink: any EventSink,
        _ transform: @Sendable (Account?) throws(StoreError) -> Account?
    ) async throws(StoreError) -> Account? {
        defer { cache.forget(id) }
        return try await base.update(id: id, reporting: event, to: sink, transform)
    }
}
