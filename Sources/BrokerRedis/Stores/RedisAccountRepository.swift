import BrokerCore

/// An ``AccountRepository`` in Redis, shared by every replica of the broker.
///
/// Each account is one string key `<prefix>account:<id>` holding the codec's
/// bytes (so an encrypting codec plugs in exactly as for files), listed in the
/// set `<prefix>accounts` and in `<prefix>accounts:<provider>`, and, when it
/// belongs to an end user, in `<prefix>end-user-accounts:<end user id>`. The record,
/// both index entries and the status counts kept for `/metrics` change
/// together in one `MULTI`/`EXEC`; `update` and
/// `delete` read under `WATCH` and retry when another writer came first, so
/// concurrent updates from any number of processes are applied one after
/// another. Nothing is cached: every read asks Redis, so replicas see each
/// other's writes at once. Any Redis failure throws ``StoreError/unavailable(_:)``.
public final class RedisAccountRepository: AccountRepository {
    /// How often `update` or `delete` re-reads after a concurrent write before giving up.
    static let maximumAttempts = 100

    /// The client the repository talks through.
    public let client: RedisClient
    /// The prefix of every key this repository uses, `tb:` unless told otherwise.
    public let keyPrefix: String
    /// Turns accounts into the stored bytes and back; where encryption at rest plugs in.
    let codec: any AccountRecordCodec
    /// The outbox on this client whose entries go in the same transaction as the change they report; nil when none.
    let outbox: RedisWebhookOutbox?

    /// Creates a repository over `client`; nothing is read until the first call. Events about account changes are
    /// written in the change's transaction when the sink writes to `outbox`.
    public init(
        client: RedisClient, keyPrefix: String = "tb:", codec: some AccountRecordCodec = PlainJSONAccountCodec(),
        outbox: RedisWebhookOutbox? = nil
    ) {
        precondition(outbox.map { $0.client === client } ?? true, "an outbox on another Redis client")
        self.client = client
        self.keyPrefix = keyPrefix
        self.codec = codec
        self.outbox = outbox
    }

    /// The account with `id`, read from Redis.
    public func get(id typedID: AccountID) async throws(StoreError) -> Account? {
        let id = typedID.string
        let key = accountKey(id)
        let reply = try await run { () async throws(RedisError) in try await self.client.command("GET", key) }
        return try decode(reply, key: key)
    }

    /// Writes `account` and its index entries in one transaction.
    public func put(_ account: Account) async throws(StoreError) {
        let bytes = try codec.encode(account)
        let commands = writeCommands(account, bytes: bytes, replacing: nil)
        let outcome = try await run { () async throws(RedisError) in
            try await self.client.withConnection { (connection) async throws(RedisError) in
                // No WATCH is set, so EXEC cannot be aborted by one; a second try guards against a WATCH left behind.
                var outcome = try await RedisTransaction.execute(commands, on: connection)
                if outcome == .conflict { outcome = try await RedisTransaction.execute(commands, on: connection) }
                return outcome
            }
        }
        guard case .committed = outcome else {
            throw .unavailable("put account \(account.id): the transaction was aborted twice")
        }
    }

    /// Every account, or those of `provider`, sorted by id in UTF-8 byte order.
    ///
    /// Reads the index set, then the records in batches; an id whose record
    /// vanished meanwhile, or belongs to another provider, is left out.
    public func list(provider: String?) async throws(StoreError) -> [Account] {
        let index = provider.map(providerIndexKey) ?? indexKey
        let records = try await run { () async throws(RedisError) -> [(String, RESPValue)] in
            try await self.client.withConnection { (connection) async throws(RedisError) in
                let members = try await connection.send([RedisCommand("SMEMBERS", index)])[0]
                guard let ids = members.array?.compactMap(\.string) else {
                    throw RedisError.server(members.errorMessage ?? "SMEMBERS \(index) did not return a set")
                }
                let sorted = ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                var records: [(String, RESPValue)] = []
                for start in stride(from: 0, to: sorted.count, by: 500) {
                    let batch = Array(sorted[start..<min(start + 500, sorted.count)])
                    let reply = try await connection.send([RedisCommand(["MGET"] + batch.map(self.accountKey))])[0]
                    guard let values = reply.array, values.count == batch.count else {
                        throw RedisError.server(reply.errorMessage ?? "MGET did not return one value per key")
                    }
                    records += zip(batch, values).map { ($0, $1) }
                }
                return records
            }
        }
        // A loop, not compactMap: compactMap rethrows, which Swift treats as throwing `any Error`.
        var accounts: [Account] = []
        for (id, value) in records {
            guard let account = try decode(value, key: accountKey(id)) else { continue }
            if let provider, !ExactKey.same(account.provider, provider) { continue }
            accounts.append(account)
        }
        return accounts
    }

    /// The key of account `id`.
    func accountKey(_ id: String) -> String { keyPrefix + "account:" + id }

    /// The set of every account id.
    var indexKey: String { keyPrefix + "accounts" }

    /// The set of the account ids of `provider`.
    func providerIndexKey(_ provider: String) -> String { keyPrefix + "accounts:" + provider }

    /// The set of the account ids of the end user `id`.
    ///
    /// A hint for `page`, which reads every record it lists and checks it: an
    /// entry left behind by a `put` that moved an account to another end user
    /// costs a read, never a wrong answer.
    func endUserIndexKey(_ id: String) -> String { keyPrefix + "end-user-accounts:" + id }

    /// The commands that store `account` as `bytes` and index it; `previous` is dropped from its provider's set if that differs.
    func writeCommands(_ account: Account, bytes: [UInt8], replacing previous: Account?) -> [RedisCommand] {
        let id = Array(account.id.utf8)
        var commands = [
            RedisCommand(bytes: [Array("SET".utf8), Array(accountKey(account.id).utf8), bytes]),
            RedisCommand(bytes: [Array("SADD".utf8), Array(indexKey.utf8), id]),
            RedisCommand(bytes: [Array("SADD".utf8), Array(providerIndexKey(account.provider).utf8), id]),
        ]
        if let previous, previous.provider != account.provider {
            commands.append(RedisCommand("SREM", providerIndexKey(previous.provider), account.id))
        }
        if let owner = account.endUser {
            commands.append(RedisCommand(bytes: [Array("SADD".utf8), Array(endUserIndexKey(owner.id).utf8), id]))
        }
        if let before = previous?.endUser, !ExactKey.same(before.id, account.endUser?.id ?? "") {
            commands.append(RedisCommand("SREM", endUserIndexKey(before.id), account.id))
        }
        return commands + censusCommands(for: account)
    }

    /// The commands that remove `account` and its index entries.
    func deleteCommands(_ account: Account) -> [RedisCommand] {
        [
            RedisCommand("DEL", accountKey(account.id)),
            RedisCommand("SREM", indexKey, account.id),
            RedisCommand("SREM", providerIndexKey(account.provider), account.id),
        ] + (account.endUser.map { [RedisCommand("SREM", endUserIndexKey($0.id), account.id)] } ?? [])
            + censusRemovalCommands(account.id)
    }

    /// The account in a `GET` reply, nil for a missing key; bytes that do not decode are ``StoreError/corrupt(path:reason:)``.
    func decode(_ reply: RESPValue, key: String) throws(StoreError) -> Account? {
        switch reply {
        case .bulk(nil):
            return nil
        case .bulk(let bytes?):
            return try codec.decode(bytes, path: "redis key \(key)")
        case .simpleString, .error, .integer, .array:
            throw .unavailable("redis: GET \(key) did not return a string")
        }
    }

    /// Runs `work`, reporting any Redis failure as ``StoreError/unavailable(_:)``.
    func run<T>(_ work: () async throws(RedisError) -> T) async throws(StoreError) -> T {
        do {
            return try await work()
        } catch {
            throw error.storeError
        }
    }
}
