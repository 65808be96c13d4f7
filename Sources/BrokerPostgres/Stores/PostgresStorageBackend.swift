import BrokerCore
import Foundation

/// The ``StorageBackend`` in PostgreSQL: accounts, flows and their outcomes, the refresh lock and backoff, and app
/// tokens, in the tables of ``PostgresSchema``, shared by every replica through one client.
///
/// An account change and its webhook event's outbox rows commit in one
/// transaction. With a cache capacity, account reads go through this replica's
/// cache, kept coherent by `LISTEN`/`NOTIFY` (``CachingPostgresAccountRepository``),
/// once ``start()`` has opened the listening session. PostgreSQL's own backups
/// (pg_dump, base backups) back the data up, so ``backup`` is nil.
public struct PostgresStorageBackend: StorageBackend {
    /// The client every store talks through.
    public let client: PostgresClient
    /// The accounts.
    public let accountRepository: PostgresAccountRepository
    /// The accounts through this replica's cache; nil when created without one.
    public let cachedAccounts: CachingPostgresAccountRepository?
    /// The flows and their outcomes.
    public let flowStore: PostgresFlowStore
    /// The refresh lock.
    public let lock: PostgresRefreshLock
    /// The refresh backoff.
    public let backoffStore: PostgresRefreshBackoffStore
    /// The app tokens.
    public let appTokenStore: PostgresAppTokenStore
    /// The client registrations at remote MCP servers.
    public let registrationStore: PostgresClientRegistrationStore
    /// The outbox; nil when opened without webhooks.
    public let webhookOutbox: PostgresWebhookOutbox?

    /// Creates the back end over `client`, whose database has ``PostgresSchema`` applied (see ``open(client:codec:flowSealer:webhooks:now:)``);
    /// nothing connects until the first call.
    public init(
        client: PostgresClient, codec: some AccountRecordCodec = PlainJSONAccountCodec(), flowSealer: EncryptedAccountCodec? = nil,
        webhooks: Bool = false, cacheCapacity: Int = 0, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.client = client
        let outbox = webhooks ? PostgresWebhookOutbox(client: client) : nil
        webhookOutbox = outbox
        accountRepository = PostgresAccountRepository(client: client, codec: codec, outbox: outbox)
        cachedAccounts = cacheCapacity > 0 ? CachingPostgresAccountRepository(base: accountRepository, capacity: cacheCapacity) : nil
        flowStore = PostgresFlowStore(client: client, sealer: flowSealer, now: now)
        lock = PostgresRefreshLock(client: client)
        backoffStore = PostgresRefreshBackoffStore(client: client, now: now)
        appTokenStore = PostgresAppTokenStore(client: client, sealer: flowSealer, now: now)
        registrationStore = PostgresClientRegistrationStore(client: client, sealer: flowSealer)
    }

    /// Migrates the schema (once across replicas starting together) and creates the back end over `client`.
    public static func open(
        client: PostgresClient, codec: some AccountRecordCodec = PlainJSONAccountCodec(), flowSealer: EncryptedAccountCodec? = nil,
        webhooks: Bool = false, now: @escaping @Sendable () -> Date = { Date() }
    ) async throws(PostgresSchemaError) -> PostgresStorageBackend {
        try await PostgresSchema.migrate(client)
        return PostgresStorageBackend(client: client, codec: codec, flowSealer: flowSealer, webhooks: webhooks, now: now)
    }

    public var accounts: any AccountRepository { cachedAccounts ?? accountRepository }
    public var flows: any FlowStore { flowStore }
    public var flowOutcomes: any FlowOutcomeStore { flowStore }
    /// The outbox, if any.
    public var outbox: (any WebhookOutbox)? { webhookOutbox }
    public var refreshLock: any RefreshLock { lock }
    public var refreshBackoff: any RefreshBackoffStore { backoffStore }
    public var appTokens: any AppTokenStore { appTokenStore }
    public var clientRegistrations: any ClientRegistrationStore { registrationStore }
    /// None: PostgreSQL's own backups cover the data.
    public var backup: (any AccountBackup)? { nil }

    /// `postgres_unreachable` while `SELECT 1` fails on the primary (a read-write server when the URL asks for one).
    public func unavailability() async -> String? {
        (try? await client.query("SELECT 1")) == nil ? "postgres_unreachable" : nil
    }
    /// Never degraded.
    public func degradation() -> String? { nil }
    /// Opens the cache's listening session, if there is a cache.
    public func start() { cachedAccounts?.start() }
    /// Closes the listening session, stops retrying lock releases the server did not answer (their TTLs free
    /// those locks) and ends the pool's idle sessions.
    public func stop() {
        cachedAccounts?.stop()
        lock.pendingReleases.stop()
        let client = client
        Task { await client.close() }
    }
}
