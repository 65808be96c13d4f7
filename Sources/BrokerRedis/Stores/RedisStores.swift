import BrokerCore
import Foundation

/// The Redis-backed account repository, flow store, refresh lock and refresh backoff over one client, as `BROKER_STORE=redis://…` selects them.
public struct RedisStores: Sendable {
    /// The shared client; its ``RedisClient/ping()`` is what readiness asks.
    public let client: RedisClient
    /// Accounts, encrypted by `codec` as the file store would.
    public let accounts: RedisAccountRepository
    /// The same accounts behind this replica's client-side cache; nil when the cache is off.
    public let cachedAccounts: CachingRedisAccountRepository?
    /// Pending flows with Redis TTLs.
    public let flows: RedisFlowStore
    /// The single-flight refresh lock.
    public let lock: RedisLock
    /// The refresh backoff shared by every replica.
    public let backoff: RedisRefreshBackoffStore
    /// The app token cache shared by every replica, its tokens sealed like flow secrets.
    public let appTokens: RedisAppTokenStore
    /// The client registrations at remote MCP servers shared by every replica, their secrets sealed like flow secrets.
    public let clientRegistrations: RedisClientRegistrationStore

    /// Creates the stores for `url`; nothing connects until the first call. `flowSealer` seals flow secrets.
    public init(
        url: RedisURL,
        codec: some AccountRecordCodec = PlainJSONAccountCodec(),
        flowSealer: EncryptedAccountCodec? = nil,
        keyPrefix: String = "tb:",
        poolSize: Int = 4,
        timeout: Double = 2,
        cacheCapacity: Int = 0,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(
            client: RedisClient(url: url, poolSize: poolSize, timeout: timeout), codec: codec,
            flowSealer: flowSealer, keyPrefix: keyPrefix, cacheCapacity: cacheCapacity, now: now)
    }

    /// Creates the stores over an existing `client`, such as the one the replicas' agreement was settled through.
    ///
    /// `cacheCapacity` above 0 puts a client-side cache of that many accounts in
    /// front of the repository (``cachedAccounts``); it caches once ``start()`` ran.
    /// Events about account changes go in the change's transaction when their sink writes to `outbox`.
    public init(
        client: RedisClient,
        codec: some AccountRecordCodec = PlainJSONAccountCodec(),
        flowSealer: EncryptedAccountCodec? = nil,
        keyPrefix: String = "tb:",
        cacheCapacity: Int = 0,
        outbox: RedisWebhookOutbox? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.client = client
        accounts = RedisAccountRepository(client: client, keyPrefix: keyPrefix, codec: codec, outbox: outbox)
        cachedAccounts = cacheCapacity > 0 ? CachingRedisAccountRepository(base: accounts, capacity: cacheCapacity) : nil
        flows = RedisFlowStore(client: client, keyPrefix: keyPrefix, sealer: flowSealer, now: now)
        lock = RedisLock(client: client, keyPrefix: keyPrefix)
        backoff = RedisRefreshBackoffStore(client: client, keyPrefix: keyPrefix)
        appTokens = RedisAppTokenStore(client: client, keyPrefix: keyPrefix, sealer: flowSealer)
        clientRegistrations = RedisClientRegistrationStore(client: client, keyPrefix: keyPrefix, sealer: flowSealer)
    }

    /// The account repository the broker uses: the cached one when the cache is on.
    public var accountRepository: any AccountRepository { cachedAccounts ?? accounts }

    /// Starts what runs in the background: the cache's invalidation connection.
    public func start() {
        cachedAccounts?.start()
    }

    /// Stops it, and the lock's retrying of releases Redis did not answer (their TTLs free those locks).
    public func stop() {
        cachedAccounts?.stop()
        lock.pendingReleases.stop()
    }
}
