import BrokerCore
import BrokerFileStore
import BrokerPostgres

extension RekeyDryRun {
    /// `token-broker rekey --dry-run` on PostgreSQL: what `rekey` would re-seal, found with reads only.
    ///
    /// Nothing is written: the schema is not migrated (a database older than
    /// this broker is read as it is, a missing table counts as empty), no key
    /// or secret is generated into `broker_settings`, and no row is locked, so
    /// it may run beside serving replicas. The key is `BROKER_ENCRYPTION_KEY`,
    /// else the generated one the database keeps; every stale record is opened
    /// with it, so a record `rekey` would stop at fails the dry run the same way.
    public static func planPostgres(configuration c: BrokerConfiguration) async throws -> RekeyDryRun {
        guard let configuration = c.postgresStore else { return try plan(configuration: c) }
        let client = try PostgresClient.opening(configuration)
        do {
            let result = try await planPostgres(c, client: client)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }

    private static func planPostgres(_ c: BrokerConfiguration, client: PostgresClient) async throws -> RekeyDryRun {
        let version = try await PostgresSchema.currentVersion(client)
        var keyring = c.encryptionKeyring
        if keyring == nil, version >= 4, let stored = try await PostgresSettings(client: client).value(PostgresSettings.generatedKeyName) {
            do {
                keyring = try EncryptionKeyring.parse(
                    String(decoding: stored, as: UTF8.self),
                    source: "PostgreSQL table broker_settings (\(PostgresSettings.generatedKeyName))")
            } catch {
                throw ConfigurationError(variable: EncryptionKeyring.environmentVariable, message: error.problem)
            }
        }
        var result = RekeyDryRun(dataDirectory: c.dataDirectory, keyID: keyring?.current.id, candidates: [], total: 0)
        result.store = c.storeDescription
        guard version > 0 else { return result }
        guard let keyring else {
            // A start-up would refuse to generate a key over these accounts, and so would rekey.
            if try await client.query("SELECT EXISTS (SELECT 1 FROM accounts)").rows.first?.bool(0) == true {
                throw ConfigurationError(
                    variable: EncryptionKeyring.environmentVariable,
                    message: "is not set, and the PostgreSQL store holds accounts but no generated key: give the key they are sealed with")
            }
            return result
        }
        let codec = EncryptedAccountCodec(keyring: keyring)
        let backend = PostgresStorageBackend(client: client, codec: codec, flowSealer: codec)
        let (candidates, total) = try await backend.accountRepository.rekeyPlan(codec: codec)
        result = RekeyDryRun(
            dataDirectory: c.dataDirectory, keyID: keyring.current.id,
            candidates: candidates.map { RekeyCandidate(accountID: $0.id, fileName: "accounts row", sealedWith: $0.sealedWith) },
            total: total)
        result.store = c.storeDescription
        // Client registrations arrived with schema version 3; an older database has none.
        let others = try await backend.rekeySealedRecords(codec: codec, dryRun: true, skipping: version < 3 ? [.clientRegistrations] : [])
        result.otherRecords = others.map { ($0.kind.rawValue, $0.rewritten, $0.total) }
        return result
    }
}
