import BrokerCore
import BrokerPostgres
import Foundation

extension StorageBackendFactory {
    /// The PostgreSQL back end of `c`, its schema migrated first (once across replicas starting together); nil when
    /// the store is not PostgreSQL.
    ///
    /// A schema newer than this binary knows is a ``ConfigurationError`` on `BROKER_STORE` (exit code 2) naming
    /// both versions: a newer broker migrated the database, and this one must not write rows it may read otherwise.
    static func openPostgres(
        _ c: BrokerConfiguration, logger: BrokerLogger, now: @escaping @Sendable () -> Date
    ) async throws -> PostgresStorageBackend? {
        guard let configuration = c.postgresStore else { return nil }
        guard let keyring = c.encryptionKeyring else {
            throw ConfigurationError(variable: EncryptionKeyring.environmentVariable, message: "must be set with BROKER_STORE=postgres://…")
        }
        let client: PostgresClient
        do {
            client = try PostgresClient(configuration: configuration)
        } catch {
            throw ConfigurationError(variable: "BROKER_STORE", message: "\(error)")
        }
        let codec = EncryptedAccountCodec(keyring: keyring)
        do {
            let applied = try await PostgresSchema.migrate(client)
            if !applied.isEmpty {
                logger.log(
                    .info, "PostgreSQL schema migrated",
                    [("versions", .string(applied.map(String.init).joined(separator: ","))), ("store", .string(c.storeDescription))])
            }
        } catch .newerThanKnown(let found, let known) {
            throw ConfigurationError(
                variable: "BROKER_STORE",
                message: "the PostgreSQL schema is at version \(found), newer than this broker knows (\(known)): "
                    + "run the newer broker, or restore a backup taken before it migrated")
        } catch .postgres(let error) {
            throw StartupError(message: "cannot migrate the PostgreSQL schema at \(c.storeDescription): \(error)")
        }
        return PostgresStorageBackend(
            client: client, codec: codec, flowSealer: codec, webhooks: c.webhooks != nil, cacheCapacity: c.postgresCacheMax, now: now)
    }
}
