import BrokerCore
import BrokerCrypto
import BrokerPostgres
import Foundation

/// What opening a PostgreSQL store gave the broker: the back end and the key and secret it seals and signs with.
struct PostgresOpening: Sendable {
    /// The back end, its schema migrated.
    let backend: PostgresStorageBackend
    /// `BROKER_ENCRYPTION_KEY`, or the keyring generated once into `broker_settings` for every replica.
    let keyring: EncryptionKeyring
    /// `BROKER_SECRET`, or the secret generated once into `broker_settings` for every replica.
    let cookieSecret: [UInt8]
}

extension StorageBackendFactory {
    /// The PostgreSQL back end of `c`, its schema migrated first (once across replicas starting together); nil when
    /// the store is not PostgreSQL.
    ///
    /// A schema newer than this binary knows is a ``ConfigurationError`` on `BROKER_STORE` (exit code 2) naming
    /// both versions: a newer broker migrated the database, and this one must not write rows it may read otherwise.
    /// An unset `BROKER_ENCRYPTION_KEY` or `BROKER_SECRET` is generated once into the database's `broker_settings`
    /// and shared by every replica that leaves it unset (``PostgresSettings``).
    static func openPostgres(
        _ c: BrokerConfiguration, logger: BrokerLogger, now: @escaping @Sendable () -> Date
    ) async throws -> PostgresOpening? {
        guard let configuration = c.postgresStore else { return nil }
        let client = try PostgresClient.opening(configuration)
        do {
            let applied = try await PostgresSchema.migrate(client)
            if !applied.isEmpty {
                logger.log(
                    .info, "PostgreSQL schema migrated",
                    [("versions", .string(applied.map(String.init).joined(separator: ","))), ("store", .string(c.storeDescription))])
            }
        } catch .newerThanKnown(let found, let known) {
            await client.close()
            throw ConfigurationError(
                variable: "BROKER_STORE",
                message: "the PostgreSQL schema is at version \(found), newer than this broker knows (\(known)): "
                    + "run the newer broker, or restore a backup taken before it migrated")
        } catch .postgres(let error) {
            await client.close()
            throw StartupError(message: "cannot migrate the PostgreSQL schema at \(c.storeDescription): \(error)")
        }
        let keyring: EncryptionKeyring
        let secret: [UInt8]
        do {
            let settings = PostgresSettings(client: client)
            if let given = c.encryptionKeyring {
                keyring = given
            } else {
                keyring = try await generatedKeyring(c, settings: settings, logger: logger)
            }
            if let given = c.secret {
                secret = Array(given.value.utf8)
            } else {
                secret = try await generatedSecret(c, settings: settings)
            }
        } catch {
            await client.close()
            throw error
        }
        let codec = EncryptedAccountCodec(keyring: keyring)
        let backend = PostgresStorageBackend(
            client: client, codec: codec, flowSealer: codec, webhooks: c.webhooks != nil, cacheCapacity: c.postgresCacheMax, now: now)
        return PostgresOpening(backend: backend, keyring: keyring, cookieSecret: secret)
    }

    /// The keyring of replicas started without `BROKER_ENCRYPTION_KEY`, agreed through `broker_settings`.
    ///
    /// A data directory's `encryption-key` file (made by the file store, whose records `migrate` copied here still
    /// sealed with it) is what this replica proposes, else a new random key. A database holding accounts but no
    /// generated keyring refuses a new key: its records are sealed with one the other replicas were given.
    private static func generatedKeyring(_ c: BrokerConfiguration, settings: PostgresSettings, logger: BrokerLogger) async throws
        -> EncryptionKeyring
    {
        let location = "PostgreSQL table broker_settings (\(PostgresSettings.generatedKeyName))"
        // The file's text as the file store wrote it (one key, or a keyring), checked before it is proposed.
        let fileText = FileManager.default.contents(atPath: c.dataDirectory + "/" + EncryptionKeyring.keyFileName).map {
            String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let fileKey: EncryptionKeyring?
        do {
            fileKey = try fileText.map { try EncryptionKeyring.parse($0, source: "the encryption-key file in the data directory") }
        } catch let error as EncryptionKeyError {
            throw ConfigurationError(variable: EncryptionKeyring.environmentVariable, message: error.problem)
        }
        let proposed = fileText ?? Base64.encode(SecureRandom.bytes(EncryptionKey.byteCount))
        let agreed: (value: [UInt8], origin: PostgresSettings.Origin)?
        do {
            agreed = try await settings.agree(
                PostgresSettings.generatedKeyName, proposing: Array(proposed.utf8), whileAccountsExist: fileKey != nil)
        } catch {
            throw StartupError(message: "cannot agree on a generated encryption key through \(c.storeDescription): \(error)")
        }
        guard let agreed else {
            throw ConfigurationError(
                variable: EncryptionKeyring.environmentVariable,
                message: "is not set, and the PostgreSQL store holds accounts sealed with a key the other replicas were given "
                    + "(it holds no generated key). Give this replica the same BROKER_ENCRYPTION_KEY.")
        }
        let keyring: EncryptionKeyring
        do {
            keyring = try EncryptionKeyring.parse(String(decoding: agreed.value, as: UTF8.self), source: location)
        } catch {
            throw ConfigurationError(variable: EncryptionKeyring.environmentVariable, message: error.problem)
        }
        logger.log(
            .warning, "BROKER_ENCRYPTION_KEY is not set: account secrets are encrypted with a key kept beside the data, in PostgreSQL",
            [("key_location", .string(location)), ("key_id", .string(keyring.current.id))])
        if let fileKey, !fileKey.ids.allSatisfy(keyring.ids.contains) {
            logger.log(
                .warning,
                "the data directory holds another generated key than the one the PostgreSQL store keeps: records sealed with it "
                    + "do not open; give BROKER_ENCRYPTION_KEY both keys (the store's first) and run token-broker rekey",
                [("key_file", .string(c.dataDirectory + "/" + EncryptionKeyring.keyFileName)), ("key_id", .string(keyring.current.id))])
        }
        return keyring
    }

    /// The cookie secret of replicas started without `BROKER_SECRET`, agreed through `broker_settings`; the data
    /// directory's `broker-secret` (from the file store) is what this replica proposes, else 32 random bytes.
    private static func generatedSecret(_ c: BrokerConfiguration, settings: PostgresSettings) async throws -> [UInt8] {
        let file = FileManager.default.contents(atPath: c.dataDirectory + "/broker-secret").map { Array($0) }
        let proposed = file.flatMap { $0.isEmpty ? nil : $0 } ?? SecureRandom.bytes(32)
        do {
            // Never nil: a secret seals nothing, so accounts in the store do not stop a new one.
            guard let agreed = try await settings.agree(PostgresSettings.generatedSecretName, proposing: proposed) else {
                throw StartupError(message: "broker_settings kept no generated secret")
            }
            return agreed.value
        } catch let error as PostgresError {
            throw StartupError(message: "cannot agree on a generated secret through \(c.storeDescription): \(error)")
        }
    }
}
