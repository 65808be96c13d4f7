import BrokerCore
import BrokerCrypto
import Foundation

/// A ``WebhookOutbox`` in Redis, shared by every replica: each delivery is attempted by one replica at a time, under a lease.
///
/// Keys, under `<prefix>webhooks:`:
///
/// - `d:<id>`: the delivery's JSON (``WebhookDelivery/encoded()``).
/// - `due`: sorted set of pending ids, scored by when the next attempt may
///   start (milliseconds since 1970). A claim moves a leased delivery's score
///   to the end of its lease, so a replica that dies mid-attempt leaves it due
///   again when the lease runs out, for any replica to take.
/// - `lease:<id>`: the token of the lease on a delivery, expiring with it;
///   settling a delivery other than by success checks it, so a replica whose
///   lease was taken over changes nothing.
/// - `pending`: sorted set of pending ids scored by enqueue time (depth and age for `/metrics`).
/// - `dropped`: sorted set of given-up ids scored by when they were dropped.
///
/// An append is one `MULTI`/`EXEC`; claims and lease-checked changes are
/// scripts, which Redis runs atomically. Scripts name keys they build from
/// their arguments, which a single Redis server (what the broker supports)
/// allows. Durability is Redis's: with `appendonly yes` and `appendfsync
/// always` an acknowledged append survives a crash of Redis too.
public final class RedisWebhookOutbox: WebhookOutbox {
    /// The client the outbox talks through.
    public let client: RedisClient
    /// `<key prefix>webhooks:`.
    let prefix: String

    /// Creates an outbox over `client` under `keyPrefix` (`tb:` like the other Redis stores).
    public init(client: RedisClient, keyPrefix: String = "tb:") {
        self.client = client
        prefix = keyPrefix + "webhooks:"
    }

    /// Pending ids by next attempt (or lease end), in milliseconds.
    var dueKey: String { prefix + "due" }
    /// Pending ids by enqueue time, in milliseconds.
    var pendingKey: String { prefix + "pending" }
    /// Dropped ids by drop time, in milliseconds.
    var droppedKey: String { prefix + "dropped" }
    /// The prefix of delivery records.
    var deliveryPrefix: String { prefix + "d:" }
    /// The prefix of lease tokens.
    var leasePrefix: String { prefix + "lease:" }

    /// Writes the records and their index entries in one `MULTI`/`EXEC`.
    public func append(_ deliveries: [WebhookDelivery]) async throws(StoreError) {
        guard !deliveries.isEmpty else { return }
        let commands = try appendCommands(deliveries)
        let outcome = try await run { () async throws(RedisError) in
            try await self.client.withConnection { (connection) async throws(RedisError) in
                try await RedisTransaction.execute(commands, on: connection)
            }
        }
        guard case .committed = outcome else { throw StoreError.unavailable("append webhook deliveries: the transaction was aborted") }
    }

    /// The commands that store `deliveries` as pending and due: what ``append(_:)`` sends, and what an account
    /// update adds to its own `MULTI`/`EXEC` to write the event with the change.
    func appendCommands(_ deliveries: [WebhookDelivery]) throws(StoreError) -> [RedisCommand] {
        var commands: [RedisCommand] = []
        for delivery in deliveries {
            commands.append(RedisCommand(bytes: [Array("SET".utf8), Array((deliveryPrefix + delivery.id).utf8), try delivery.encoded()]))
            commands.append(RedisCommand("ZADD", dueKey, Self.milliseconds(delivery.nextAttemptAt), delivery.id))
            commands.append(RedisCommand("ZADD", pendingKey, Self.milliseconds(delivery.enqueuedAt), delivery.id))
        }
        return commands
    }

    /// Leases due deliveries with ``claimScript``; every replica may call it at once, each delivery goes to one.
    public func claim(
        limit: Int, now: Date, lease: Double, holding: [String: WebhookReceiverHold]
    ) async throws(StoreError) -> [WebhookLease] {
        guard limit > 0 else { return [] }
        let leaseMilliseconds = max(1, Int((lease * 1000).rounded(.up)))
        let until = Self.milliseconds(now.addingTimeInterval(Double(leaseMilliseconds) / 1000))
        let token = SecureRandom.token(byteCount: 12)
        var arguments = [
            Self.milliseconds(now), until, String(limit), token, deliveryPrefix, leasePrefix,
            String(leaseMilliseconds),
        ]
        let nowMilliseconds = WebhookDelivery.milliseconds(now)
        for (url, hold) in holding.sorted(by: { $0.key < $1.key }) {
            // Set aside past `now`, or the claim would meet them again at once.
            let aside = max(WebhookDelivery.milliseconds(hold.until), nowMilliseconds + 1)
            arguments += [url, String(max(0, hold.leases)), String(aside), Self.milliseconds(hold.windowEndedBefore)]
        }
        let reply = try await script(Self.claimScript, keys: [dueKey], arguments: arguments)
        guard let records = reply.array else { throw StoreError.unavailable("claim webhook deliveries: the script did not answer a list") }
        var leases: [WebhookLease] = []
        for record in records {
            guard let bytes = record.bytes else { continue }
            leases.append(WebhookLease(delivery: try WebhookDelivery.decode(bytes, path: "redis \(deliveryPrefix)…"), token: token))
        }
        return leases
    }

    /// Deletes the record, its lease and its index entries in one `MULTI`/`EXEC`.
    public func complete(_ lease: WebhookLease) async throws(StoreError) {
        let id = lease.delivery.id
        // Delivered is delivered, whoever holds the lease now.
        _ = try await transaction(
            [
                RedisCommand("DEL", deliveryPrefix + id, leasePrefix + id),
                RedisCommand("ZREM", dueKey, id),
                RedisCommand("ZREM", pendingKey, id),
            ], what: "complete webhook delivery \(id)")
    }

    /// Stores the updated record and due time with ``rescheduleScript``, only under this lease.
    public func reschedule(_ lease: WebhookLease, as updated: WebhookDelivery) async throws(StoreError) {
        _ = try await script(
            Self.rescheduleScript, keys: [dueKey],
            arguments: [
                Array(updated.id.utf8), Array(lease.token.utf8), try updated.encoded(),
                Array(Self.milliseconds(updated.nextAttemptAt).utf8),
                Array(deliveryPrefix.utf8), Array(leasePrefix.utf8),
            ])
    }

    /// Moves the delivery to `dropped` with ``dropScript``, only under this lease, and prunes old dropped ones.
    public func drop(_ lease: WebhookLease, as updated: WebhookDelivery) async throws(StoreError) {
        let at = updated.droppedAt ?? Date()
        let cutoff = at.addingTimeInterval(-WebhookRetention.droppedFor)
        _ = try await script(
            Self.dropScript, keys: [dueKey, pendingKey, droppedKey],
            arguments: [
                Array(updated.id.utf8), Array(lease.token.utf8), try updated.encoded(),
                Array(Self.milliseconds(at).utf8), Array(deliveryPrefix.utf8), Array(leasePrefix.utf8),
                Array(Self.milliseconds(cutoff).utf8), Array(String(WebhookRetention.droppedCount).utf8),
            ])
    }

    /// A page of pending ids by due time and of dropped ids latest first (``pageScript``), then their records.
    ///
    /// The pending list is in the order of `due`, where a leased delivery stands at the end of its lease.
    public func list(limit: Int, cursor: WebhookListCursor?) async throws(StoreError) -> WebhookOutboxListing {
        let limit = max(1, limit)
        var next = WebhookListCursor(pending: .end, dropped: .end)
        let (pending, pendingNext) = try await page(dueKey, from: cursor?.pending ?? .start, ascending: true, limit: limit)
        let (dropped, droppedNext) = try await page(droppedKey, from: cursor?.dropped ?? .start, ascending: false, limit: limit)
        next.pending = pendingNext
        next.dropped = droppedNext
        return WebhookOutboxListing(
            pending: pending, dropped: dropped, stats: try await stats(),
            next: next == WebhookListCursor(pending: .end, dropped: .end) ? nil : next)
    }

    /// Up to `limit` records of sorted set `key` from `position`, and where the next page starts (``WebhookListCursor/Position/end`` when none).
    private func page(
        _ key: String, from position: WebhookListCursor.Position, ascending: Bool, limit: Int
    ) async throws(StoreError) -> ([WebhookDelivery], WebhookListCursor.Position) {
        let (score, member): (String, String)
        switch position {
        case .end: return ([], .end)
        case .start: (score, member) = ("", "")
        case .after(let milliseconds, let id): (score, member) = (String(milliseconds), id)
        }
        let reply = try await script(
            Self.pageScript, keys: [key], arguments: [score, member, ascending ? "asc" : "desc", String(limit + 1)])
        let flat = reply.array ?? []
        var entries: [(id: String, milliseconds: Int64)] = []
        var i = 0
        while i + 1 < flat.count {
            if let id = flat[i].string, let value = flat[i + 1].string.flatMap(Double.init) {
                entries.append((id, Int64(value.rounded(.down))))
            }
            i += 2
        }
        let shown = Array(entries.prefix(limit))
        let next: WebhookListCursor.Position =
            entries.count > limit ? shown.last.map { .after(milliseconds: $0.milliseconds, id: $0.id) } ?? .end : .end
        return (try await records(ids: shown.map(\.id)), next)
    }

    /// Rewrites each record found as due now with ``replayScript``, which checks it did not change meanwhile.
    public func replay(id: String, now: Date) async throws(StoreError) -> Int {
        let ids = id.contains(".") ? [id] : WebhookDelivery.ids(ofEvent: id)
        var count = 0
        for id in ids {
            let reply = try await run { () async throws(RedisError) in
                try await self.client.command(RedisCommand("GET", self.deliveryPrefix + id))
            }
            guard let current = reply.bytes else { continue }
            var delivery = try WebhookDelivery.decode(current, path: "redis \(deliveryPrefix + id)")
            delivery.attempts = 0
            delivery.droppedAt = nil
            delivery.enqueuedAt = now
            delivery.nextAttemptAt = now
            let done = try await script(
                Self.replayScript, keys: [dueKey, pendingKey, droppedKey],
                arguments: [
                    Array(id.utf8), current, try delivery.encoded(), Array(Self.milliseconds(now).utf8),
                    Array(deliveryPrefix.utf8), Array(leasePrefix.utf8),
                ])
            count += done.integer ?? 0
        }
        return count
    }

    /// `ZCARD`s and the oldest pending score, in one pipeline.
    public func stats() async throws(StoreError) -> WebhookOutboxStats {
        let replies = try await run { () async throws(RedisError) in
            try await self.client.pipeline(commands: [
                RedisCommand("ZCARD", self.pendingKey),
                RedisCommand("ZCARD", self.droppedKey),
                RedisCommand("ZRANGE", self.pendingKey, "0", "0", "WITHSCORES"),
            ])
        }
        if let message = replies.lazy.compactMap(\.errorMessage).first { throw RedisError.server(message).storeError }
        let oldest = replies[2].array.flatMap { $0.count == 2 ? $0[1].string.flatMap(Double.init) : nil }
        return WebhookOutboxStats(
            pending: replies[0].integer ?? 0, dropped: replies[1].integer ?? 0,
            oldestPendingEnqueuedAt: oldest.map { Date(timeIntervalSince1970: $0 / 1000) })
    }

    /// The deliveries stored under `ids`, in that order; ids whose record vanished meanwhile are left out.
    private func records(ids: [String]) async throws(StoreError) -> [WebhookDelivery] {
        guard !ids.isEmpty else { return [] }
        let reply = try await run { () async throws(RedisError) in
            try await self.client.command(RedisCommand(["MGET"] + ids.map { self.deliveryPrefix + $0 }))
        }
        var deliveries: [WebhookDelivery] = []
        for (id, value) in zip(ids, reply.array ?? []) {
            guard let bytes = value.bytes else { continue }
            deliveries.append(try WebhookDelivery.decode(bytes, path: "redis \(deliveryPrefix + id)"))
        }
        return deliveries
    }

    /// Runs `commands` in one `MULTI`/`EXEC`.
    private func transaction(_ commands: [RedisCommand], what: String) async throws(StoreError) -> [RESPValue] {
        let outcome = try await run { () async throws(RedisError) in
            try await self.client.withConnection { (connection) async throws(RedisError) in
                try await RedisTransaction.execute(commands, on: connection)
            }
        }
        guard case .committed(let replies) = outcome else { throw StoreError.unavailable("\(what): the transaction was aborted") }
        return replies
    }

    /// Runs a script with text arguments.
    private func script(_ source: String, keys: [String], arguments: [String]) async throws(StoreError) -> RESPValue {
        try await script(source, keys: keys, arguments: arguments.map { Array($0.utf8) })
    }

    /// Runs a script with byte arguments (records go out as they are).
    private func script(_ source: String, keys: [String], arguments: [[UInt8]]) async throws(StoreError) -> RESPValue {
        let command = RedisCommand(
            bytes: [Array("EVAL".utf8), Array(source.utf8), Array(String(keys.count).utf8)]
                + keys.map { Array($0.utf8) } + arguments)
        return try await run { () async throws(RedisError) in try await self.client.command(command) }
    }

    /// Maps a Redis failure to ``StoreError/unavailable(_:)``.
    private func run<T>(_ work: () async throws(RedisError) -> T) async throws(StoreError) -> T {
        do {
            return try await work()
        } catch {
            throw error.storeError
        }
    }

    /// Whole milliseconds since 1970, as a sorted-set score.
    static func milliseconds(_ date: Date) -> String {
        String(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }
}
