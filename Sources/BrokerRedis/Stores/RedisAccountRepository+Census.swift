import BrokerCore
import Foundation

/// Status counts kept beside the records, so `/metrics` reads three numbers instead of every account.
///
/// Every write and delete (``writeCommands(_:bytes:replacing:)``,
/// ``deleteCommands(_:)``) updates, in the same transaction as the record:
/// the sets `<prefix>census:reauthorization_required` and
/// `<prefix>census:refresh_exhausted` of the accounts in those statuses, and the sorted set `<prefix>census:expiring` of the active accounts
/// with an expiry and no refresh token, scored by their expiry in Unix
/// seconds. A count is then `SCARD` of the index and of those sets, and
/// `ZCOUNT` of the expiries up to now, in one `MULTI`/`EXEC`. Accounts written
/// before these keys existed are counted once, by the first count after start
/// (a store whose census predates `refresh_exhausted` holds no account in it, so its missing set counts 0 correctly)
/// that finds no `<prefix>census:ready`; that pass reads each batch of
/// records under `WATCH`, so a concurrent write is never overwritten with
/// what the record said before it.
extension RedisAccountRepository: AccountStatusCounting {
    /// Itself: counted from the counts kept beside the records.
    public var statusCounting: (any AccountStatusCounting)? { self }

    /// How many records one step of the initial count reads and indexes.
    static let censusBatchSize = 500

    /// The set of the ids of accounts whose status is `reauthorization_required`.
    var reauthorizationKey: String { keyPrefix + "census:reauthorization_required" }
    /// The set of the ids of accounts whose status is `refresh_exhausted`.
    var exhaustedKey: String { keyPrefix + "census:refresh_exhausted" }
    /// The set of the ids of accounts whose status is `invalid` (a store whose census predates it holds none: counts 0).
    var invalidKey: String { keyPrefix + "census:invalid" }
    /// The sorted set of active accounts with an expiry and no refresh token, scored by expiry (Unix seconds).
    var expiringKey: String { keyPrefix + "census:expiring" }
    /// Present once every account written before the census keys existed has been indexed.
    var censusReadyKey: String { keyPrefix + "census:ready" }

    /// The accounts counted by status at `now`: four reads of counts, after the one-time indexing of older records if it has not happened.
    public func statusCounts(at now: Date) async throws(StoreError) -> AccountStatusCounts {
        try await ensureCensus()
        let commands = [
            RedisCommand("SCARD", indexKey), RedisCommand("SCARD", reauthorizationKey),
            RedisCommand("ZCOUNT", expiringKey, "-inf", Self.score(now)), RedisCommand("SCARD", exhaustedKey),
            RedisCommand("SCARD", invalidKey),
        ]
        let outcome = try await run { () async throws(RedisError) in
            try await self.client.withConnection { (connection) async throws(RedisError) in
                try await RedisTransaction.execute(commands, on: connection)
            }
        }
        guard case .committed(let replies) = outcome, replies.count == 5,
            let total = replies[0].integer, let reauthorization = replies[1].integer, let expired = replies[2].integer,
            let exhausted = replies[3].integer, let invalid = replies[4].integer
        else {
            throw StoreError.unavailable("redis: the account counts did not come back as five integers")
        }
        return AccountStatusCounts(
            active: max(0, total - reauthorization - exhausted - invalid - expired), expired: expired,
            reauthorizationRequired: reauthorization, refreshExhausted: exhausted, invalid: invalid)
    }

    /// The commands that put `account` (stored under `id`) where the census counts it.
    func censusCommands(for account: Account) -> [RedisCommand] {
        let id = account.id
        switch account.status {
        case .reauthorizationRequired:
            return [
                RedisCommand("SADD", reauthorizationKey, id), RedisCommand("SREM", exhaustedKey, id),
                RedisCommand("SREM", invalidKey, id), RedisCommand("ZREM", expiringKey, id),
            ]
        case .refreshExhausted:
            return [
                RedisCommand("SADD", exhaustedKey, id), RedisCommand("SREM", reauthorizationKey, id),
                RedisCommand("SREM", invalidKey, id), RedisCommand("ZREM", expiringKey, id),
            ]
        case .invalid:
            return [
                RedisCommand("SADD", invalidKey, id), RedisCommand("SREM", reauthorizationKey, id),
                RedisCommand("SREM", exhaustedKey, id), RedisCommand("ZREM", expiringKey, id),
            ]
        case .active:
            var commands = [
                RedisCommand("SREM", reauthorizationKey, id), RedisCommand("SREM", exhaustedKey, id), RedisCommand("SREM", invalidKey, id),
            ]
            if let expiry = AccountStatusCounts.expiryThatCounts(account) {
                commands.append(RedisCommand("ZADD", expiringKey, Self.score(expiry), id))
            } else {
                commands.append(RedisCommand("ZREM", expiringKey, id))
            }
            return commands
        }
    }

    /// The commands that take `id` out of the census.
    func censusRemovalCommands(_ id: String) -> [RedisCommand] {
        [
            RedisCommand("SREM", reauthorizationKey, id), RedisCommand("SREM", exhaustedKey, id), RedisCommand("SREM", invalidKey, id),
            RedisCommand("ZREM", expiringKey, id),
        ]
    }

    /// A date as a sorted-set score: Unix seconds, to the millisecond the records keep.
    static func score(_ date: Date) -> String {
        String(format: "%.3f", date.timeIntervalSince1970)
    }

    /// Indexes every account once when `census:ready` is missing (a store written by an older version, or a new one).
    private func ensureCensus() async throws(StoreError) {
        let ready = try await run { () async throws(RedisError) in try await self.client.command("EXISTS", self.censusReadyKey) }
        guard ready.integer != 1 else { return }
        let members = try await run { () async throws(RedisError) in try await self.client.command("SMEMBERS", self.indexKey) }
        guard let ids = members.array?.compactMap(\.string) else {
            throw StoreError.unavailable("redis: SMEMBERS \(indexKey) did not return a set")
        }
        for start in stride(from: 0, to: ids.count, by: Self.censusBatchSize) {
            try await indexBatch(Array(ids[start..<min(start + Self.censusBatchSize, ids.count)]))
        }
        _ = try await run { () async throws(RedisError) in try await self.client.command("SET", self.censusReadyKey, "1") }
    }

    /// Reads `ids`' records under `WATCH` and indexes them in one transaction, again from the read when another writer came first.
    private func indexBatch(_ ids: [String]) async throws(StoreError) {
        let keys = ids.map(accountKey)
        for _ in 0..<Self.maximumAttempts {
            let committed: Bool = try await client.withConnection { (connection) async throws(StoreError) -> Bool in
                do throws(StoreError) {
                    let replies = try await run { () async throws(RedisError) in
                        try await connection.send([RedisCommand(["WATCH"] + keys), RedisCommand(["MGET"] + keys)])
                    }
                    guard let values = replies[1].array, values.count == ids.count else {
                        throw StoreError.unavailable("redis: MGET did not return one value per key")
                    }
                    var commands: [RedisCommand] = []
                    for (id, value) in zip(ids, values) {
                        guard case .bulk(let bytes?) = value else {
                            commands += censusRemovalCommands(id)
                            continue
                        }
                        commands += censusCommands(for: try readable(bytes, key: accountKey(id)))
                    }
                    let outcome = try await run { () async throws(RedisError) in
                        try await RedisTransaction.execute(commands, on: connection)
                    }
                    return outcome != .conflict
                } catch {
                    // The connection goes back to the pool: it must not carry this WATCH into another task's transaction.
                    _ = try? await connection.send([RedisCommand("UNWATCH")])
                    throw error
                }
            }
            if committed { return }
        }
        throw StoreError.unavailable("counting accounts: \(Self.maximumAttempts) attempts in a row lost to concurrent writers")
    }

    /// The record's status, expiry and whether it holds a refresh token; sealed secrets are not opened when the codec can avoid it.
    private func readable(_ bytes: [UInt8], key: String) throws(StoreError) -> Account {
        if let deferring = codec.deferredDecoding?.decoder {
            return try deferring.storedAccount(bytes, path: "redis key \(key)").account
        }
        return try codec.decode(bytes, path: "redis key \(key)")
    }
}
