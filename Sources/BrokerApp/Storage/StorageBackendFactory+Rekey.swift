import BrokerCore
import BrokerFileStore
import BrokerRedis
import Foundation

extension StorageBackendFactory {
    /// `token-broker rekey`: re-encrypts every account of the configured store not sealed with the current key.
    static func rekey(configuration c: BrokerConfiguration, logger: BrokerLogger) async throws -> (
        rewritten: Int, total: Int, keyID: String
    ) {
        if let location = c.redisStore { return try await rekeyRedis(configuration: c, location: location, logger: logger) }
        if c.postgresStore != nil { return try await rekeyPostgres(configuration: c, logger: logger) }
        try DataDirectory.prepare(c.dataDirectory)
        // Never under a running broker, whose memory would keep the records as they were.
        let lock: DataDirectoryLock?
        do {
            lock = try DataDirectoryLock.acquire(in: c.dataDirectory)
        } catch {
            throw StartupError(message: "\(error); stop it before rekeying")
        }
        defer { lock?.release() }
        let codec = try accountCodec(c, logger: logger)
        let repository = try JSONFileAccountRepository(
            directory: c.dataDirectory, codec: codec, compactionThreshold: c.accountsCompactBytes)
        reportOpening(repository, logger: logger)
        let result = try await repository.rekey(codec: codec)
        if result.rewritten > 0, FileManager.default.fileExists(atPath: c.dataDirectory + "/" + AccountStoreFormat.migratedDirectoryName) {
            logger.log(
                .warning,
                "accounts.migrated/ (the former layout, kept after the migration) still holds the records as they were "
                    + "before this rekey; remove it once you no longer need to roll back")
        }
        return (result.rewritten, result.total, codec.keyring.current.id)
    }

    /// `token-broker rekey --dry-run`: the records of the data directory `rekey` would re-seal with `codec`'s key, and how many exist.
    static func rekeyPlan(directory: String, codec: EncryptedAccountCodec) throws -> (candidates: [RekeyCandidate], total: Int) {
        try JSONFileAccountRepository.rekeyPlan(directory: directory, codec: codec)
    }

    /// `token-broker rekey` on PostgreSQL: migrates the schema as `serve` does, then reseals every stale account
    /// record; running replicas may keep serving (a row they write meanwhile is read and resealed again).
    private static func rekeyPostgres(configuration c: BrokerConfiguration, logger: BrokerLogger) async throws -> (
        rewritten: Int, total: Int, keyID: String
    ) {
        guard let opening = try await openPostgres(c, logger: logger, now: { Date() }) else {
            throw StartupError(message: "rekey: no PostgreSQL store configured")
        }
        let backend = opening.backend
        defer { backend.stop() }
        let codec = EncryptedAccountCodec(keyring: opening.keyring)
        let result = try await backend.accountRepository.rekey(codec: codec)
        // Then what else holds a sealed secret: pending flows, app tokens, client registrations.
        for other in try await backend.rekeySealedRecords(codec: codec) {
            logger.log(
                .info, "rekey: \(other.kind.rawValue) resealed",
                [("rewritten", .int(other.rewritten)), ("total", .int(other.total)), ("key_id", .string(codec.keyring.current.id))])
        }
        return (result.rewritten, result.total, codec.keyring.current.id)
    }

    /// `token-broker rekey` on Redis: settles like `serve`, reseals every stale record, then retires the fingerprints of older keys.
    private static func rekeyRedis(configuration c: BrokerConfiguration, location: RedisLocation, logger: BrokerLogger) async throws -> (
        rewritten: Int, total: Int, keyID: String
    ) {
        let settlement = try await settle(
            c, client: RedisClient(location: location, minimumReplicas: c.redisMinReplicas), logger: logger)
        let codec = EncryptedAccountCodec(keyring: settlement.keyring)
        let stores = RedisStores(client: settlement.client, codec: codec, flowSealer: codec)
        let result = try await stores.accounts.rekey(codec: codec)
        let registry = RedisReplicaRegistry(client: settlement.client)
        switch try await registry.retireKeys(except: codec.keyring.current.id, expected: settlement.recorded) {
        case nil:
            logger.log(.warning, "another replica recorded a key while rekeying: older keys stay recorded; run rekey again")
        case let retired? where !retired.isEmpty:
            logger.log(
                .info, "older keys retired: replicas may now start without them", [("key_ids", .string(retired.joined(separator: ",")))])
        case .some:
            break
        }
        return (result.rewritten, result.total, codec.keyring.current.id)
    }
}
