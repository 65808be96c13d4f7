import BrokerCore
import BrokerCrypto

/// What the replicas of one Redis store agree on, kept in Redis beside the data: key and secret fingerprints, and generated values.
///
/// Keys, under the store's prefix:
/// - `replicas:fingerprints`, a hash checked by ``ReplicaAgreement`` at every start;
/// - `generated:encryption-key`, the keyring (text in `BROKER_ENCRYPTION_KEY` syntax) of replicas
///   started without `BROKER_ENCRYPTION_KEY`, created once by the first of them;
/// - `generated:broker-secret`, the cookie secret of replicas started without `BROKER_SECRET`.
///
/// Every read-decide-write runs under `WATCH` and commits with `MULTI`/`EXEC`,
/// so replicas starting together on an empty store settle on one value.
public struct RedisReplicaRegistry: Sendable {
    /// The client the registry talks through.
    public let client: RedisClient
    /// The prefix of its keys, the one the stores use.
    public let keyPrefix: String

    /// How often a transaction is retried after another replica changed a watched key.
    static let maximumAttempts = 20

    /// Creates a registry over `client` with the stores' `keyPrefix`.
    public init(client: RedisClient, keyPrefix: String = "tb:") {
        self.client = client
        self.keyPrefix = keyPrefix
    }

    /// The hash of fingerprints.
    public var fingerprintsKey: String { keyPrefix + "replicas:fingerprints" }
    /// The generated keyring.
    public var generatedKeyKey: String { keyPrefix + "generated:encryption-key" }
    /// The generated cookie secret.
    public var generatedSecretKey: String { keyPrefix + "generated:broker-secret" }

    /// Where a generated keyring or secret came from.
    public enum Origin: Sendable, Equatable {
        /// This replica created it in Redis just now.
        case created
        /// This replica put the value of its data directory's file (made by an earlier version) into Redis.
        case adoptedFile
        /// Another replica had already put it in Redis.
        case stored
        /// It was in Redis, and this replica appended its data directory's key, which the stored keyring lacked.
        case storedWithFile
    }

    /// The keyring of replicas started without `BROKER_ENCRYPTION_KEY`, created in Redis by the first of them.
    ///
    /// `fileKey` is the content of the data directory's `encryption-key` file,
    /// if an earlier version generated one there: records in Redis may be
    /// sealed with it, so it becomes the shared key when Redis holds none yet,
    /// and is appended (readable, not sealing) when Redis holds another.
    /// Refuses when Redis records keys but no generated keyring: the other
    /// replicas were given a key, and this one must be too.
    public func generatedKeyring(
        fileKey: String?, randomBytes: @escaping @Sendable (Int) -> [UInt8] = SecureRandom.bytes
    ) async throws -> (keyring: EncryptionKeyring, origin: Origin) {
        let source = "redis key \(generatedKeyKey)"
        let file = try fileKey.map { try EncryptionKeyring.parse($0, source: "the encryption-key file in the data directory") }
        return try await holding { connection in
            for _ in 0..<Self.maximumAttempts {
                let (stored, fields) = try await watchAndRead(generatedKeyKey, on: connection)
                guard let stored else {
                    let recorded = fields.keys.filter { $0.hasPrefix("key:") }.map { String($0.dropFirst(4)) }.sorted()
                    if file == nil, !recorded.isEmpty {
                        try await unwatch(connection)
                        throw ReplicaDisagreement(
                            variable: ReplicaDisagreement.keyVariable,
                            message: """
                                is not set, and the other replicas seal records with a key they were given (key id \
                                \(recorded.joined(separator: ", "))). Give this replica the same BROKER_ENCRYPTION_KEY.
                                """)
                    }
                    let text = fileKey.map(Self.trimmed) ?? Base64.encode(randomBytes(EncryptionKey.byteCount))
                    if try await commit([RedisCommand("SET", generatedKeyKey, text)], on: connection) {
                        return (try EncryptionKeyring.parse(text, source: source), file == nil ? .created : .adoptedFile)
                    }
                    continue
                }
                let text = Self.trimmed(String(decoding: stored, as: UTF8.self))
                let keyring = try EncryptionKeyring.parse(text, source: source)
                guard let file, let fileText = fileKey, !file.ids.allSatisfy(keyring.ids.contains) else {
                    try await unwatch(connection)
                    return (keyring, .stored)
                }
                let extended = text + "," + Self.trimmed(fileText)
                if try await commit([RedisCommand("SET", generatedKeyKey, extended)], on: connection) {
                    return (try EncryptionKeyring.parse(extended, source: source), .storedWithFile)
                }
            }
            throw RedisError.unavailable("\(generatedKeyKey) kept changing while this replica read it")
        }
    }

    /// The cookie secret of replicas started without `BROKER_SECRET`, created in Redis by the first of them.
    ///
    /// `fileSecret` is the data directory's `broker-secret` (from an earlier
    /// version), which becomes the shared secret when Redis holds none yet;
    /// otherwise the stored one wins (cookies signed with the file's stop
    /// verifying, and their browsers sign in again). Refuses when Redis records
    /// a secret fingerprint but no generated secret: the others were given one.
    public func generatedSecret(
        fileSecret: [UInt8]?, randomBytes: @escaping @Sendable (Int) -> [UInt8] = SecureRandom.bytes
    ) async throws -> (secret: [UInt8], origin: Origin) {
        try await holding { connection in
            for _ in 0..<Self.maximumAttempts {
                let (stored, fields) = try await watchAndRead(generatedSecretKey, on: connection)
                if let stored, !stored.isEmpty {
                    try await unwatch(connection)
                    return (stored, .stored)
                }
                if fileSecret == nil, fields[ReplicaAgreement.secretField] != nil {
                    try await unwatch(connection)
                    throw ReplicaDisagreement(
                        variable: ReplicaDisagreement.secretVariable,
                        message: """
                            is not set, and the other replicas sign cookies with a secret they were given. \
                            Give this replica the same BROKER_SECRET.
                            """)
                }
                let secret = fileSecret.flatMap { $0.isEmpty ? nil : $0 } ?? randomBytes(32)
                let set = RedisCommand(bytes: [Array("SET".utf8), Array(generatedSecretKey.utf8), secret])
                if try await commit([set], on: connection) {
                    return (secret, fileSecret == nil ? .created : .adoptedFile)
                }
            }
            throw RedisError.unavailable("\(generatedSecretKey) kept changing while this replica read it")
        }
    }

    /// Checks `mine` against the recorded fingerprints and records what is missing; throws ``ReplicaDisagreement`` when it may not join.
    ///
    /// `keyOrigin` and `secretOrigin` describe a generated key or secret for the message (nil when set by variable).
    /// Returns the fields as recorded afterwards.
    @discardableResult
    public func agree(_ mine: ReplicaFingerprints, keyOrigin: String? = nil, secretOrigin: String? = nil) async throws -> [String: String] {
        try await holding { connection in
            for _ in 0..<Self.maximumAttempts {
                let (_, fields) = try await watchAndRead(nil, on: connection)
                let verdict = ReplicaAgreement.verdict(recorded: fields, mine: mine)
                guard case .agree(let record) = verdict else {
                    try await unwatch(connection)
                    throw ReplicaDisagreement(verdict, mine: mine, keyOrigin: keyOrigin, secretOrigin: secretOrigin)!
                }
                if record.isEmpty {
                    try await unwatch(connection)
                    return fields
                }
                let arguments = record.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
                if try await commit([RedisCommand(["HSET", fingerprintsKey] + arguments)], on: connection) {
                    return fields.merging(record) { $1 }
                }
            }
            throw RedisError.unavailable("\(fingerprintsKey) kept changing while this replica read it")
        }
    }

    /// Removes the fingerprints of every key but `current`, once a rekey left no record sealed with them.
    ///
    /// Runs under `WATCH` against `expected` (the fields as read before the
    /// rekey): if another replica recorded something meanwhile, nothing is
    /// removed and this returns nil. Otherwise returns the ids removed.
    public func retireKeys(except current: String, expected: [String: String]) async throws -> [String]? {
        try await holding { connection in
            let (_, fields) = try await watchAndRead(nil, on: connection)
            let retired = fields.keys.filter { $0.hasPrefix("key:") && $0 != ReplicaAgreement.keyField(current) }.sorted()
            guard fields == expected, !retired.isEmpty else {
                try await unwatch(connection)
                return fields == expected ? [] : nil
            }
            guard try await commit([RedisCommand(["HDEL", fingerprintsKey] + retired)], on: connection) else { return nil }
            return retired.map { String($0.dropFirst(4)) }
        }
    }

    /// The recorded fingerprints, read without watching.
    public func recorded() async throws -> [String: String] {
        try Self.fields(try await client.command("HGETALL", fingerprintsKey), key: fingerprintsKey)
    }

    /// Runs `body` on one pooled connection; on any error the connection is unwatched before it goes back.
    private func holding<T>(_ body: (RedisConnection) async throws -> T) async throws -> T {
        try await client.withConnection { connection in
            do {
                return try await body(connection)
            } catch {
                _ = try? await connection.send([RedisCommand("UNWATCH")])
                throw error
            }
        }
    }

    /// Watches the fingerprints (and `key`), then reads them: the value of `key` (nil when absent or not asked) and the fields.
    private func watchAndRead(_ key: String?, on connection: RedisConnection) async throws -> (value: [UInt8]?, fields: [String: String]) {
        var commands = [RedisCommand(["WATCH", fingerprintsKey] + (key.map { [$0] } ?? []))]
        commands.append(RedisCommand("HGETALL", fingerprintsKey))
        if let key { commands.append(RedisCommand("GET", key)) }
        let replies = try await connection.send(commands)
        if let failure = replies.lazy.compactMap(\.errorMessage).first { throw RedisError.server(failure) }
        let fields = try Self.fields(replies[1], key: fingerprintsKey)
        return (key == nil ? nil : replies[2].bytes, fields)
    }

    /// Runs `commands` in `MULTI`/`EXEC` under the `WATCH` set; false when a watched key changed.
    private func commit(_ commands: [RedisCommand], on connection: RedisConnection) async throws -> Bool {
        switch try await RedisTransaction.execute(commands, on: connection) {
        case .committed: return true
        case .conflict: return false
        }
    }

    /// Drops the `WATCH`, so the connection goes back to the pool clean.
    private func unwatch(_ connection: RedisConnection) async throws {
        _ = try await connection.send([RedisCommand("UNWATCH")])
    }

    /// The field → value pairs of an `HGETALL` reply.
    static func fields(_ reply: RESPValue, key: String) throws -> [String: String] {
        guard let items = reply.array, items.count % 2 == 0 else {
            throw RedisError.server(reply.errorMessage ?? "HGETALL \(key) did not return field-value pairs")
        }
        var fields: [String: String] = [:]
        for index in stride(from: 0, to: items.count, by: 2) {
            guard let field = items[index].string, let value = items[index + 1].string else { continue }
            fields[field] = value
        }
        return fields
    }

    /// `text` without surrounding whitespace and newlines.
    static func trimmed(_ text: String) -> String {
        String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
