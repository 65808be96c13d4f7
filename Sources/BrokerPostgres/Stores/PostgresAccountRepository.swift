import BrokerCore
import Foundation

/// An ``AccountRepository`` in PostgreSQL, shared by every replica of the broker.
///
/// Each account is one row of `accounts`: the codec's bytes (so an encrypting
/// codec plugs in as for files and Redis) and copies of the fields `/accounts`
/// filters and pages by (provider, end user, tags, status, expiry), written
/// together by one statement. `update` reads the row `FOR UPDATE` in a
/// transaction, so concurrent updates from any number of replicas are applied
/// one after another; two that create the same new id meet at the primary key
/// and the loser runs again. Nothing is cached. Any PostgreSQL failure throws
/// ``StoreError/unavailable(_:)``.
public final class PostgresAccountRepository: AccountRepository {
    /// The client the repository talks through.
    public let client: PostgresClient
    /// Turns accounts into the stored bytes and back; where encryption at rest plugs in.
    let codec: any AccountRecordCodec
    /// The outbox on this client whose rows go in the same transaction as the change they report; nil when none.
    let outbox: PostgresWebhookOutbox?

    /// Creates a repository over `client`, whose database has ``PostgresSchema`` applied. Events about account
    /// changes are written in the change's transaction when the sink writes to `outbox`.
    public init(client: PostgresClient, codec: some AccountRecordCodec = PlainJSONAccountCodec(), outbox: PostgresWebhookOutbox? = nil) {
        precondition(outbox.map { $0.client === client } ?? true, "an outbox on another PostgreSQL client")
        self.client = client
        self.codec = codec
        self.outbox = outbox
    }

    /// The account with `id`.
    public func get(id: AccountID) async throws(StoreError) -> Account? {
        let rows = try await client.storeQuery("SELECT record FROM accounts WHERE id = $1", [.text(id.string)])
        guard let row = rows.rows.first else { return nil }
        return try decode(row, id: id.string)
    }

    /// Writes `account`, replacing any earlier record, in one statement.
    public func put(_ account: Account) async throws(StoreError) {
        let bytes = try codec.encode(account)
        do {
            // The write, then its NOTIFY in a transaction of its own, in one round trip.
            _ = try await client.pipeline(segments: [
                [PostgresQuery(Self.upsert, Self.parameters(account, bytes: bytes))], Self.notifying(account.id),
            ])
        } catch {
            throw error.storeError
        }
    }

    /// Removes the account with `id` and returns it, in one `DELETE … RETURNING`.
    public func delete(id: AccountID) async throws(StoreError) -> Account? {
        let results: [PostgresRows]
        do {
            results =
                try await client.pipeline(segments: [
                    [PostgresQuery("DELETE FROM accounts WHERE id = $1 RETURNING record", [.text(id.string)])], Self.notifying(id.string),
                ]).first ?? []
        } catch {
            throw error.storeError
        }
        guard let row = results.first?.rows.first else { return nil }
        return try decode(row, id: id.string)
    }

    /// The channel every replica's cache listens on; a notification's payload is the id of the account that changed,
    /// or empty for "anything may have changed".
    public static let channel = "tb_accounts"

    /// Tells every listening replica that account `id` changed (PostgreSQL delivers a NOTIFY when its transaction
    /// commits). Ids past 7,000 bytes (the payload's limit is 8,000) notify with an empty payload, which drops every
    /// cached account.
    ///
    /// It is sent in a transaction of its own right after the change's COMMIT, in the same round trip (a later
    /// Sync segment), never inside the change's transaction: a notifying transaction holds a database-wide lock
    /// from before its COMMIT until after it, so notifying COMMITs run one at a time, each waiting for its own
    /// WAL flush and the synchronous standby (docs/performance.md has the figures). Its own transaction commits
    /// asynchronously and holds that lock for microseconds.
    ///
    /// It is sent only while some replica listens: when no session of this
    /// database carries ``listenerApplicationName`` in `pg_stat_activity` (every
    /// replica runs with `BROKER_POSTGRES_CACHE_MAX=0`, or none started its
    /// cache), the statement selects nothing and neither takes that lock nor
    /// queues a notification. This is checked by the statement itself, after
    /// the change's COMMIT, so it needs no timing: a listener whose session was
    /// not there yet turns its cache on only after its `LISTEN`, later than
    /// that COMMIT, and reads the change from the database. With
    /// `track_activities` off, where `pg_stat_activity` may not say, it always
    /// notifies.
    static func notify(_ id: String) -> PostgresQuery {
        PostgresQuery(
            """
            SELECT pg_notify('\(channel)', $1) WHERE NOT current_setting('track_activities')::boolean
              OR EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = $2)
            """, [.text(id.utf8.count > 7000 ? "" : id), .text(listenerApplicationName)])
    }

    /// The `application_name` of every listening session (``PostgresAccountListener``), the one writers look for in
    /// `pg_stat_activity` before they notify; it replaces the URL's `application_name` on that session only.
    public static let listenerApplicationName = "token-broker cache listener"

    /// The segment that notifies `id` after the change's segment: the NOTIFY, committed asynchronously.
    static func notifying(_ id: String) -> [PostgresQuery] {
        [PostgresCommit.asynchronousCommit, notify(id)]
    }

    /// Every account, or those of `provider`, sorted by id in UTF-8 byte order (the columns are `COLLATE "C"`).
    public func list(provider: String?) async throws(StoreError) -> [Account] {
        let rows =
            if let provider {
                try await client.storeQuery("SELECT record, id FROM accounts WHERE provider = $1 ORDER BY id", [.text(provider)])
            } else {
                try await client.storeQuery("SELECT record, id FROM accounts ORDER BY id")
            }
        var accounts: [Account] = []
        for row in rows.rows { accounts.append(try decode(row, id: row.string(1) ?? "")) }
        return accounts
    }

    /// Up to `limit` accounts passing `filter` after `after`, sorted by id; see ``AccountRepository/page(after:limit:filter:)``.
    ///
    /// Provider, end user and tags are answered by the indexes (`tags @> …` on
    /// the GIN index); each record read is checked against the whole filter
    /// too, so the filter's test PostgreSQL cannot answer (`also`) is applied
    /// here, reading further batches until the page and one more match are found.
    public func page(after: AccountID?, limit: Int, filter: AccountFilter) async throws(StoreError) -> AccountPage {
        let limit = max(1, limit)
        let tags = Self.tagsJSON(filter.tags)
        var cursor = after?.string
        var accounts: [Account] = []
        while true {
            let batch = min(500, limit + 1 - accounts.count)
            let rows = try await client.storeQuery(
                """
                SELECT record, id FROM accounts
                WHERE ($1::text IS NULL OR id > $1) AND ($2::text IS NULL OR provider = $2)
                  AND ($3::text IS NULL OR end_user = $3) AND tags @> $4::jsonb
                ORDER BY id LIMIT $5
                """,
                [
                    cursor.map(PostgresValue.text) ?? .null, filter.provider.map(PostgresValue.text) ?? .null,
                    filter.endUserID.map(PostgresValue.text) ?? .null, .text(tags), .int(batch),
                ])
            for row in rows.rows {
                let id = row.string(1) ?? ""
                cursor = id
                let account = try decode(row, id: id)
                guard filter.matches(account) else { continue }
                if accounts.count == limit { return AccountPage(accounts: accounts, nextAfter: accounts.last?.accountID) }
                accounts.append(account)
            }
            if rows.rows.count < batch { return AccountPage(accounts: accounts, nextAfter: nil) }
        }
    }

    /// Reads the row `FOR UPDATE`, applies `transform`, and writes or deletes the result before COMMIT.
    public func update(id: AccountID, _ transform: @Sendable (Account?) throws(StoreError) -> Account?) async throws(StoreError)
        -> Account?
    {
        try await apply(id: id.string, transform).stored
    }

    /// Like ``update(id:_:)``, with the event's outbox rows inserted in the account's transaction.
    ///
    /// The change and its deliveries commit together or not at all; a
    /// transaction run again (another writer came first) builds the event
    /// afresh from what it read. Needs the sink to write to the outbox this
    /// repository was created with; with any other sink the change is written
    /// first and the event after (``AccountRepository/updateThenRecord(id:reporting:to:_:)``).
    public func update(
        id: AccountID, reporting event: AccountChangeEvent, to sink: any EventSink,
        _ transform: @Sendable (Account?) throws(StoreError) -> Account?
    ) async throws(StoreError) -> Account? {
        guard let outbox, sink.changeOutbox === outbox else {
            return try await updateThenRecord(id: id, reporting: event, to: sink, transform)
        }
        let appended = TransactionNote<Bool>(false)
        let result = try await apply(
            id: id.string,
            alongside: { (before, after) throws(StoreError) -> [PostgresQuery] in
                appended.value = false
                guard let (type, data) = event(before, after) else { return [] }
                let deliveries = sink.deliveries(type, data)
                guard !deliveries.isEmpty else { return [] }
                appended.value = true
                return try outbox.appendQueries(deliveries)
            }, transform)
        if appended.value { sink.appended() }
        return result.stored
    }

    /// The transaction behind ``update(id:_:)``: the account before and as stored after, in two round trips (the
    /// row read `FOR UPDATE`; then the write, `alongside`'s statements, COMMIT and the NOTIFY after it).
    ///
    /// An unchanged result writes nothing; nil deletes; a result with another id
    /// is refused. When no row existed, the new one is inserted with a plain
    /// `INSERT`: a concurrent creator of the same id makes it fail with a
    /// unique violation and the transaction runs again, reading that row.
    func apply(
        id: String, alongside: @Sendable (Account?, Account?) throws(StoreError) -> [PostgresQuery] = { _, _ in [] },
        _ transform: @Sendable (Account?) throws(StoreError) -> Account?
    ) async throws(StoreError) -> (previous: Account?, stored: Account?) {
        try await client.storeReadWriteTransaction(read: PostgresQuery("SELECT record FROM accounts WHERE id = $1 FOR UPDATE", [.text(id)]))
        {
            (rows) throws -> (value: (previous: Account?, stored: Account?), writes: [PostgresQuery], afterCommit: [PostgresQuery]) in
            let current = try rows.rows.first.map { (row) throws(StoreError) in try self.decode(row, id: id) } ?? nil
            let next = try transform(current)
            if let next, !ExactKey.same(next.id, id) {
                throw StoreError.unavailable("update of account \(id): the transform returned account \(next.id)")
            }
            let stored: Account?
            var writes: [PostgresQuery] = []
            switch (current, next) {
            case (nil, nil):
                stored = nil
            case (.some, nil):
                writes.append(PostgresQuery("DELETE FROM accounts WHERE id = $1", [.text(id)]))
                stored = nil
            case (let current, let next?):
                if next == current {
                    stored = current
                } else {
                    let bytes = try self.codec.encode(next)
                    // Return the decoded bytes, so what this returns equals what a later read gives.
                    stored = try self.codec.decode(bytes, path: Self.path(id))
                    writes.append(PostgresQuery(current == nil ? Self.insert : Self.upsert, Self.parameters(next, bytes: bytes)))
                }
            }
            let changed = !writes.isEmpty
            writes += try alongside(current, stored)
            return ((current, stored), writes, changed ? [Self.notify(id)] : [])
        }
    }

    /// Inserts a new row; fails with a unique violation when the id exists.
    static let insert = """
        INSERT INTO accounts (id, provider, uid, end_user, tags, status, expires_at, updated_at, record, counts_expired_at)
        VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9::bytea, $10)
        """

    /// Inserts or replaces a row.
    static let upsert =
        insert + """

            ON CONFLICT (id) DO UPDATE SET provider = EXCLUDED.provider, uid = EXCLUDED.uid, end_user = EXCLUDED.end_user,
              tags = EXCLUDED.tags, status = EXCLUDED.status, expires_at = EXCLUDED.expires_at,
              updated_at = EXCLUDED.updated_at, record = EXCLUDED.record, counts_expired_at = EXCLUDED.counts_expired_at
            """

    /// The parameters of ``insert`` and ``upsert`` for `account` stored as `bytes`.
    static func parameters(_ account: Account, bytes: [UInt8]) -> [PostgresValue] {
        [
            .text(account.id), .text(account.provider), .text(account.uid), account.endUser.map { .text($0.id) } ?? .null,
            .text(tagsJSON(account.tags)), .text(account.status.rawValue), account.expiresAt.map { .int(milliseconds($0)) } ?? .null,
            .int(milliseconds(account.updatedAt)), .bytea(bytes),
            AccountStatusCounts.expiryThatCounts(account).map { .int(milliseconds($0)) } ?? .null,
        ]
    }

    /// Accounts by status, counted by PostgreSQL from the indexed columns (no record is read).
    public var statusCounting: (any AccountStatusCounting)? { self }

    /// Tags as a JSON object for the `jsonb` column and `@>`; keys sorted, so equal tags give equal text.
    static func tagsJSON(_ tags: [String: String]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: tags, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Where a record is, for errors.
    static func path(_ id: String) -> String { "postgres accounts row \(id)" }

    /// The account in a row's first column; a NULL or bytes that do not decode are ``StoreError/corrupt(path:reason:)``.
    func decode(_ row: PostgresRow, id: String) throws(StoreError) -> Account {
        guard let bytes = row.bytea(0) else { throw .corrupt(path: Self.path(id), reason: "the record is not bytea") }
        return try codec.decode(bytes, path: Self.path(id))
    }
}

extension PostgresAccountRepository: AccountStatusCounting {
    /// Every account counted by status at `now`, in one aggregate over the columns (`counts_expired_at` is
    /// ``AccountStatusCounts/expiryThatCounts(_:)``, written with each record).
    ///
    /// A scan of the table's columns on each `/metrics` scrape: milliseconds for 100,000 rows, no record decoded.
    public func statusCounts(at now: Date) async throws(StoreError) -> AccountStatusCounts {
        let rows = try await client.storeQuery(
            """
            SELECT count(*), count(*) FILTER (WHERE status = 'reauthorization_required'),
              count(*) FILTER (WHERE status = 'refresh_exhausted'), count(*) FILTER (WHERE counts_expired_at <= $1)
            FROM accounts
            """, [.int(milliseconds(now))])
        guard let row = rows.rows.first, let total = row.int(0), let reauthorization = row.int(1), let exhausted = row.int(2),
            let expired = row.int(3)
        else { throw .unavailable("postgres: the account counts came back incomplete") }
        return AccountStatusCounts(
            active: total - reauthorization - exhausted - expired, expired: expired, reauthorizationRequired: reauthorization,
            refreshExhausted: exhausted)
    }
}
