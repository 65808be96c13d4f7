import BrokerCore
import BrokerFileStore
import BrokerRedis
import Foundation

/// The key, secret and Redis client a Redis-backed broker settled with the other replicas before it was built.
struct ReplicaSettlement: Sendable {
    /// The keys records are sealed (current) and opened (all) with.
    let keyring: EncryptionKeyring
    /// The cookie-signing secret.
    let cookieSecret: [UInt8]
    /// The client the settlement went through; the stores use it too.
    let client: RedisClient
    /// The fingerprints recorded in Redis once this replica joined.
    let recorded: [String: String]
}

extension StorageBackendFactory {
    /// How long start-up waits for an unreachable Redis before giving up, in seconds.
    static let redisStartupWait: Double = 30

    /// What a broker on Redis settles with the other replicas before it is built; nil on the file store.
    ///
    /// A replica whose key or secret differs from what the others recorded in
    /// Redis stops here with ``ConfigurationError`` (exit code 2) naming the
    /// variable. An unset key or secret is generated once into Redis, beside
    /// the data, and shared by every replica that leaves it unset. While Redis
    /// cannot be reached this waits, up to ``redisStartupWait`` seconds.
    static func settlement(_ c: BrokerConfiguration, logger: BrokerLogger) async throws -> ReplicaSettlement? {
        guard let location = c.redisStore else { return nil }
        return try await settle(c, client: RedisClient(location: location, minimumReplicas: c.redisMinReplicas), logger: logger)
    }

    /// Settles the keyring and cookie secret through `client`, waiting for Redis while it is unreachable.
    static func settle(_ c: BrokerConfiguration, client: RedisClient, logger: BrokerLogger) async throws -> ReplicaSettlement {
        do {
            try DataDirectory.prepare(c.dataDirectory)
        } catch {
            throw ConfigurationError(variable: "BROKER_DATA_DIR", message: "\(error)")
        }
        let registry = RedisReplicaRegistry(client: client)
        let deadline = Date().addingTimeInterval(redisStartupWait)
        var waiting = false
        while true {
            do {
                return try await settleOnce(c, registry: registry, logger: logger)
            } catch let error as RedisError {
                switch error {
                case .unavailable, .timeout:
                    guard Date() < deadline else {
                        throw StartupError(
                            message: "cannot reach Redis at \(client.location) to settle the encryption key and secret "
                                + "with the other replicas within \(Int(redisStartupWait)) s: \(error)")
                    }
                    if !waiting {
                        logger.log(
                            .warning, "waiting for Redis", [("store", .string("\(client.location)")), ("reason", .string("\(error)"))])
                        waiting = true
                    }
                    try await Task.sleep(nanoseconds: 250_000_000)
                case .server, .protocolError:
                    throw StartupError(message: "Redis at \(client.location) refused to settle the encryption key and secret: \(error)")
                }
            } catch let disagreement as ReplicaDisagreement {
                throw ConfigurationError(variable: disagreement.variable, message: disagreement.message)
            } catch let error as EncryptionKeyError {
                throw ConfigurationError(variable: EncryptionKeyring.environmentVariable, message: "\(error)")
            }
        }
    }

    /// One attempt: the keyring, the secret, then the agreement.
    private static func settleOnce(_ c: BrokerConfiguration, registry: RedisReplicaRegistry, logger: BrokerLogger) async throws
        -> ReplicaSettlement
    {
        let keyring: EncryptionKeyring
        var keyOrigin: String?
        if let configured = c.encryptionKeyring {
            keyring = configured
        } else {
            let fileKey = readFile(c.dataDirectory + "/" + EncryptionKeyring.keyFileName).map { String(decoding: $0, as: UTF8.self) }
            let generated = try await registry.generatedKeyring(fileKey: fileKey)
            keyring = generated.keyring
            keyOrigin = "generated in Redis (\(registry.generatedKeyKey))"
            logGeneratedKey(generated.origin, keyring: keyring, registry: registry, dataDirectory: c.dataDirectory, logger: logger)
        }
        let secret: [UInt8]
        var secretOrigin: String?
        if let value = c.secret {
            secret = Array(value.value.utf8)
        } else {
            let generated = try await registry.generatedSecret(fileSecret: readFile(c.dataDirectory + "/broker-secret"))
            secret = generated.secret
            secretOrigin = "generated in Redis (\(registry.generatedSecretKey))"
            if generated.origin == .adoptedFile {
                logger.log(
                    .info,
                    "BROKER_SECRET is not set: the secret generated in the data directory by an earlier version is now shared through Redis",
                    [("secret_key", .string(registry.generatedSecretKey))])
            }
        }
        let recorded = try await registry.agree(
            ReplicaFingerprints(keyring: keyring, cookieSecret: secret),
            keyOrigin: keyOrigin, secretOrigin: secretOrigin)
        return ReplicaSettlement(keyring: keyring, cookieSecret: secret, client: registry.client, recorded: recorded)
    }

    /// The warning the file store gives for a generated key, with where this one lives.
    private static func logGeneratedKey(
        _ origin: RedisReplicaRegistry.Origin, keyring: EncryptionKeyring,
        registry: RedisReplicaRegistry, dataDirectory: String, logger: BrokerLogger
    ) {
        logger.log(
            .warning, "BROKER_ENCRYPTION_KEY is not set: account secrets are encrypted with a key kept beside the data, in Redis",
            [("key_location", .string("redis key \(registry.generatedKeyKey)")), ("key_id", .string(keyring.current.id))])
        switch origin {
        case .created, .stored:
            break
        case .adoptedFile:
            logger.log(
                .info, "the encryption key an earlier version generated in the data directory is now shared through Redis",
                [("key_file", .string(dataDirectory + "/" + EncryptionKeyring.keyFileName)), ("key_id", .string(keyring.current.id))])
        case .storedWithFile:
            logger.log(
                .warning,
                "this replica's data directory held another generated key: it is kept in Redis as an older key, "
                    + "so records sealed with it stay readable; restart the other replicas to read them, and run token-broker rekey",
                [("key_ids", .string(keyring.ids.joined(separator: ",")))])
        }
    }

    /// The bytes of the file at `path`, or nil when it does not exist or cannot be read.
    private static func readFile(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { Array($0) }
    }
}
