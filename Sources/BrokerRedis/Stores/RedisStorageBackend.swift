import BrokerCore
import Foundation

/// The ``StorageBackend`` in Redis (`BROKER_STORE=redis://…`): everything shared by every replica through one client.
///
/// Keys are those of ``RedisStores`` and ``RedisWebhookOutbox``, under one
/// prefix. An account change and its event's outbox entries go in one
/// `MULTI`/`EXEC`. Redis persistence backs the data up, so ``backup`` is nil.
public struct RedisStorageBackend: StorageBackend {
    /// The stores over the client.
    public let stores: RedisStores
    /// The outbox in the same Redis; nil when opened without webhooks.
    public let redisOutbox: RedisWebhookOutbox?

    /// Creates the back end over `client`; nothing connects until the first call. `cacheCapacity` above 0 caches
    /// accounts on this replica (``RedisStores/cachedAccounts``); `webhooks` makes the outbox.
    public init(
        client: RedisClient, codec: some AccountRecordCodec = PlainJSONAccountCodec(), flowSealer: EncryptedAccountCodec? = nil,
        keyPrefix: String = "tb:", cacheCapacity: Int = 0, webhooks: Bool = false, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        let outbox = webhooks ? RedisWebhookOutbox(client: client, keyPrefix: keyPrefix) : nil
        redisOutbox = outbox
        stores = RedisStores(
            client: client, codec: codec, flowSealer: flowSealer, keyPrefix: keyPrefix, cacheCapacity: cacheCapacity,
            outbox: outbox, now: now)
    }

    /// The client every store talks through.
    public var client: RedisClient { stores.client }
    /// The accounts, behind this replica's cache when it is on.
    public var accounts: any AccountRepository { stores.accountRepository }
    /// Pending flows with Redis TTLs.
    public var flows: any FlowStore { stores.flows }
    /// Outcomes beside the flows.
    public var flowOutcomes: any FlowOutcomeStore { stores.flows }
    /// The outbox, if any.
    public var outbox: (any WebhookOutbox)? { redisOutbox }
    /// One lock for all replicas.
    public var refreshLock: any RefreshLock { stores.lock }
    /// One backoff for all replicas: N replicas make one provider call per backoff window, not N.
    public var refreshBackoff: any RefreshBackoffStore { stores.backoff }
    /// App tokens shared by every replica.
    public var appTokens: any AppTokenStore { stores.appTokens }
    /// Client registrations shared by every replica.
    public var clientRegistrations: any ClientRegistrationStore { stores.clientRegistrations }
    /// None: Redis persistence backs the accounts up.
    public var backup: (any AccountBackup)? { nil }

    /// `redis_unreachable` while a `PING` is not answered.
    public func unavailability() async -> String? {
        await stores.client.ping() ? nil : "redis_unreachable"
    }

    /// Never degraded.
    public func degradation() -> String? { nil }

    /// Starts the cache's invalidation connection.
    public func start() { stores.start() }

    /// Stops it.
    public func stop() { stores.stop() }
}
