import BrokerCore
import BrokerFileStore
import BrokerPostgres
import BrokerRedis
import Foundation

extension StorageBackendFactory {
    /// `token-broker migrate --to URL`: reads the configured store (files or Redis) and copies it into PostgreSQL at
    /// `destination`; `afterBatch` as in ``StoreMigration/copy(_:to:codec:rowsPerStatement:afterBatch:)``.
    ///
    /// The file store is read under the data directory's lock, so no broker serves it meanwhile (and none starts).
    static func migrate(
        configuration c: BrokerConfiguration, to destination: PostgresConfiguration, logger: BrokerLogger,
        rowsPerStatement: Int = StoreMigration.rowsPerStatement, afterBatch: (Int) throws -> Void = { _ in }
    ) async throws -> StoreMigration.Report {
        if c.postgresStore != nil {
            throw ConfigurationError(
                variable: "BROKER_STORE", message: "is already PostgreSQL: migrate copies a file store or Redis into it")
        }
        let client = try PostgresClient.opening(destination, variable: "--to")
        defer { Task { await client.close() } }
        if let location = c.redisStore {
            let settlement = try await settle(
                c, client: RedisClient(location: location, minimumReplicas: c.redisMinReplicas), logger: logger)
            let codec = EncryptedAccountCodec(keyring: settlement.keyring)
            let source = try await redisSource(settlement.client, codec: codec, description: c.storeDescription)
            return try await StoreMigration.copy(
                source, to: client, codec: codec, rowsPerStatement: rowsPerStatement, afterBatch: afterBatch)
        }
        // The key of BROKER_ENCRYPTION_KEY, else the one the file store generated beside its data.
        let found: EncryptionKeyring?
        do {
            found = try c.encryptionKeyring ?? EncryptionKeyring.loadExisting(environmentValue: nil, dataDirectory: c.dataDirectory)
        } catch let error as EncryptionKeyError {
            throw ConfigurationError(variable: EncryptionKeyring.environmentVariable, message: error.problem)
        }
        guard let keyring = found else {
            throw ConfigurationError(
                variable: EncryptionKeyring.environmentVariable,
                message: "must be set: a broker on PostgreSQL seals accounts with it (and the data directory has no encryption-key file)")
        }
        let codec = EncryptedAccountCodec(keyring: keyring)
        let lock: DataDirectoryLock?
        do {
            lock = try DataDirectoryLock.acquire(in: c.dataDirectory)
        } catch {
            throw StartupError(message: "\(error); stop the broker before migrating its data directory")
        }
        defer { lock?.release() }
        let source = try await fileSource(c.dataDirectory, codec: codec)
        return try await StoreMigration.copy(source, to: client, codec: codec, rowsPerStatement: rowsPerStatement, afterBatch: afterBatch)
    }

    /// The accounts of the data directory as stored (read without opening a sealed secret), and its outbox when it has one.
    private static func fileSource(_ directory: String, codec: EncryptedAccountCodec) async throws -> StoreMigration.Source {
        let records = try AccountStoreReader.records(in: directory) { bytes, path throws(StoreError) in
            try codec.storedAccount(bytes, path: path).account.id
        }
        var deliveries: [WebhookDelivery] = []
        // Opened only when there is one: opening creates webhooks/ in a directory that never had webhooks.
        if FileManager.default.fileExists(atPath: directory + "/webhooks/" + JournalWebhookOutbox.journalName) {
            deliveries = try await everyDelivery(of: try JournalWebhookOutbox(directory: directory, now: Date()))
        }
        return StoreMigration.Source(
            accounts: records.map { StoreMigration.AccountRecord(id: $0.id, bytes: $0.bytes, origin: $0.origin) },
            deliveries: deliveries, description: "files in \(directory)")
    }

    /// Every account of Redis, read page by page and written with `codec` (Redis is read through its repository),
    /// and every delivery of its outbox.
    private static func redisSource(_ client: RedisClient, codec: EncryptedAccountCodec, description: String) async throws
        -> StoreMigration.Source
    {
        let stores = RedisStores(client: client, codec: codec, flowSealer: codec)
        var records: [StoreMigration.AccountRecord] = []
        var after: AccountID?
        repeat {
            let page = try await stores.accounts.page(after: after, limit: 1000, filter: AccountFilter())
            for account in page.accounts {
                records.append(.init(id: account.id, bytes: try codec.encode(account), origin: "\(description) account \(account.id)"))
            }
            after = page.nextAfter
        } while after != nil
        let deliveries = try await everyDelivery(of: RedisWebhookOutbox(client: client))
        return StoreMigration.Source(accounts: records, deliveries: deliveries, description: description)
    }

    /// Every delivery of `outbox`, pending and dropped, page by page.
    private static func everyDelivery(of outbox: any WebhookOutbox) async throws -> [WebhookDelivery] {
        var deliveries: [WebhookDelivery] = []
        var cursor: WebhookListCursor?
        repeat {
            let listing = try await outbox.list(limit: 500, cursor: cursor)
            deliveries += listing.pending + listing.dropped
            cursor = listing.next
        } while cursor != nil
        // A delivery seen on two pages (it moved between them) is copied once.
        var seen = Set<String>()
        return deliveries.filter { seen.insert($0.id).inserted }
    }
}
