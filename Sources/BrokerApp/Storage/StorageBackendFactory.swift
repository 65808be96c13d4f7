import BrokerCore
import BrokerCrypto
import BrokerFileStore
import BrokerPostgres
import BrokerRedis
import Foundation

/// The one place that picks the storage back end the configuration names and opens it: the data directory's files
/// (the default), Redis or PostgreSQL (`BROKER_STORE`).
///
/// Adding a back end: one case here, building its ``StorageBackend``.
enum StorageBackendFactory {
    /// What opening the store gave the broker: the back end and what lives beside it in the same store.
    struct Opened: Sendable {
        /// The back end every service stores into.
        let backend: any StorageBackend
        /// The cookie-signing secret: `BROKER_SECRET`, settled with the replicas, or generated beside the data.
        let cookieSecret: [UInt8]
        /// What the store adds to `/metrics`.
        let metrics: StorageMetrics
    }

    /// `BROKER_ACCOUNTS_COMPACT_BYTES` unless set: the file store's journal size that starts a compaction.
    static let defaultAccountsCompactBytes = JSONFileAccountRepository.defaultCompactionThreshold

    /// Creates the data directory (mode 0700) when missing; a failure names `BROKER_DATA_DIR`.
    static func prepareDataDirectory(_ c: BrokerConfiguration) throws {
        do {
            try DataDirectory.prepare(c.dataDirectory)
        } catch {
            throw ConfigurationError(variable: "BROKER_DATA_DIR", message: "\(error)")
        }
    }

    /// Opens the back end of `c`, with a webhook outbox when webhooks are configured; `settlement` carries what a
    /// Redis-backed broker agreed with the other replicas (required then).
    static func open(
        _ c: BrokerConfiguration, logger: BrokerLogger, now: @escaping @Sendable () -> Date, settlement: ReplicaSettlement?,
        postgres: PostgresOpening? = nil
    ) throws -> Opened {
        // Before the store is read: a second broker on the same files would diverge from the first.
        let lock: DataDirectoryLock?
        do {
            lock = c.redisStore == nil && c.postgresStore == nil ? try DataDirectoryLock.acquire(in: c.dataDirectory) : nil
        } catch {
            throw StartupError(message: "\(error)")
        }
        if c.redisStore != nil, settlement == nil {
            throw StartupError(
                message: "a broker on Redis is built with Broker.make, which settles its key and secret with the other replicas")
        }
        if c.postgresStore != nil {
            // Broker.make opened it, settling a generated key and secret through the database when unset.
            guard let opening = postgres else {
                throw StartupError(message: "a broker on PostgreSQL is built with Broker.make, which migrates the schema first")
            }
            let postgres = opening.backend
            let client = postgres.client
            let cache = postgres.cachedAccounts
            return Opened(
                backend: postgres, cookieSecret: opening.cookieSecret,
                metrics: StorageMetrics(connection: { client.metrics.prometheusText + (cache?.prometheusText ?? "") }))
        }
        let codec = try settlement.map { EncryptedAccountCodec(keyring: $0.keyring) } ?? accountCodec(c, logger: logger)
        if let settlement {
            // Shared state for several replicas: accounts, flows, outbox, locks and backoff in Redis.
            let redis = RedisStorageBackend(
                client: settlement.client, codec: codec, flowSealer: codec, cacheCapacity: c.redisCacheMax,
                webhooks: c.webhooks != nil, now: now)
            let metrics = settlement.client.metrics
            return Opened(
                backend: redis, cookieSecret: settlement.cookieSecret,
                metrics: StorageMetrics(connection: { metrics.snapshot().prometheusText }))
        }
        return try openFiles(c, codec: codec, lock: lock, logger: logger, now: now)
    }

    /// The file store: accounts, flows, then the outbox, each reporting what it found at open.
    private static func openFiles(
        _ c: BrokerConfiguration, codec: EncryptedAccountCodec, lock: DataDirectoryLock?, logger: BrokerLogger,
        now: @escaping @Sendable () -> Date
    ) throws -> Opened {
        let dataDirectory = c.dataDirectory
        let repository: JSONFileAccountRepository
        let flows: JournalFlowStore
        let cookieSecret: [UInt8]
        do {
            repository = try JSONFileAccountRepository(directory: dataDirectory, codec: codec, compactionThreshold: c.accountsCompactBytes)
            reportOpening(repository, logger: logger)
            flows = try JournalFlowStore(
                directory: dataDirectory, durable: false, sealer: codec, maxPending: c.maxPendingFlows, now: now())
            reportOpening(flows, logger: logger)
            cookieSecret =
                try c.secret.map { Array($0.value.utf8) }
                ?? DataDirectory.readOrCreateSecret(named: "broker-secret", in: dataDirectory) { SecureRandom.bytes(32) }
        } catch {
            throw StartupError(message: "cannot open the data directory \(dataDirectory): \(error)")
        }
        let outbox: JournalWebhookOutbox?
        do {
            outbox = try c.webhooks.map { _ throws(StoreError) in try JournalWebhookOutbox(directory: dataDirectory, now: Date()) }
        } catch {
            throw StartupError(message: "cannot open the webhook outbox in \(dataDirectory): \(error)")
        }
        if let outbox { reportOpening(outbox, logger: logger) }
        let backend = FileStorageBackend(repository: repository, flows: flows, outbox: outbox, lock: lock, sealer: codec, now: now)
        return Opened(
            backend: backend, cookieSecret: cookieSecret,
            metrics: StorageMetrics(records: {
                BrokerMetrics.renderFileStore(repository.storeSizes, damagedRecords: repository.damagedRecordCount)
            }))
    }

    /// The codec that seals account secrets with the configured (or generated) encryption key.
    static func accountCodec(_ c: BrokerConfiguration, logger: BrokerLogger) throws -> EncryptedAccountCodec {
        let keyring: EncryptionKeyring
        let generated: Bool
        do {
            (keyring, generated) =
                try c.encryptionKeyring.map { ($0, false) }
                ?? EncryptionKeyring.loadOrGenerate(environmentValue: nil, dataDirectory: c.dataDirectory)
        } catch let error as EncryptionKeyError {
            throw ConfigurationError(variable: EncryptionKeyring.environmentVariable, message: error.problem)
        } catch {
            throw StartupError(message: "cannot read or create the encryption key in \(c.dataDirectory): \(error)")
        }
        if generated {
            logger.log(
                .warning, "BROKER_ENCRYPTION_KEY is not set: account secrets are encrypted with a key kept beside the data",
                [("key_file", .string(c.dataDirectory + "/" + EncryptionKeyring.keyFileName)), ("key_id", .string(keyring.current.id))])
        }
        return EncryptedAccountCodec(keyring: keyring)
    }
}

/// What a store adds to `/metrics`: lines about its records (after the account gauge) and about its connection
/// (after the webhook lines); empty when it has nothing to add.
struct StorageMetrics: Sendable {
    /// The file store's journal and snapshot sizes and damaged records.
    var records: @Sendable () -> String = { "" }
    /// The Redis client's round trips, pool and cache; the PostgreSQL client's round trips, pool and errors.
    var connection: @Sendable () -> String = { "" }
}
