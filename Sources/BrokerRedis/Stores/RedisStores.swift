import BrokerCore
import Foundation

/// The Redis-backed account repository, flow store, refresh lock and refresh backoff over one client, as `BROKER_STORE=redis://…` selects them.
public struct RedisStores: Sendable {
    /// The shared client; its ``RedisClient/ping()`` is what readiness asks.
    public let client: RedisClient
    /// Accounts, encrypted by `codec` as the file store would.
    public let accounts: RedisAccountRepository
    /// Pending flows with Redis TTLs.
    public let flows: RedisFlowStore
    /// The single-flight refresh lock.
    public let lock: RedisLock
    /// The refresh backoff shared by every replica.
    public let backoff: RedisRefreshBackoffStore

    /// Creates the stores for `url`; nothing connects until the first call. `flowSealer` seals flow secrets.
    public init(
        url: RedisURL,
        codec: some AccountRecordCodec = PlainJSONAccountCodec(),
        flowSealer: EncryptedAccountCodec? = nil,
        keyPrefix: String = "tb:",
        poolSize: Int = 4,
        timeout: Double = 2,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(client: RedisClient(url: url, poolSize: poolSize, timeout: timeout), codec: codec,
                  flowSealer: flowSealer, keyPrefix: keyPrefix, now: now)
    }

    /// Creates the stores over an existing `client`, such as the one the replicas' agreement was settled through.
    public init(
        client: RedisClient,
        codec: some AccountRecordCodec = PlainJSONAccountCodec(),
        flowSealer: EncryptedAccountCodec? = nil,
        keyPrefix: String = "tb:",
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.client = client
        accounts = RedisAccountRepository(client: client, keyPrefix: keyPrefix, codec: codec)
        flows = RedisFlowStore(client: client, keyPrefix: keyPrefix, sealer: flowSealer, now: now)
        lock = RedisLock(client: client, keyPrefix: keyPrefix)
        backoff = RedisRefreshBackoffStore(client: client, keyPrefix: keyPrefix)
    }
}
