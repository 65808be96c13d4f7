import BrokerCore
import BrokerPostgres
import Foundation

/// `token-broker migrate --to postgres://…`: copies what a file store or Redis holds into PostgreSQL.
///
/// What is copied: every account record and every webhook delivery (pending and dropped). Sealed records keep
/// their bytes, so they stay sealed with the keys they have (the broker on PostgreSQL must be given the same
/// `BROKER_ENCRYPTION_KEY`); a plaintext record of an earlier version is sealed with the current key on the way, so
/// no plaintext token ever reaches the database. Not copied, chosen where the issue is silent: sign-ins in progress
/// and their outcomes (minutes long; a user whose sign-in straddles the switch starts again), the refresh backoff
/// (it forgets within minutes) and app tokens (fetched again on first use; the file store keeps them in memory only).
///
/// Idempotent and resumable: rows are written in batches of multi-row `INSERT … ON CONFLICT` statements, several
/// pipelined in one round trip and one transaction. An account already there is replaced only by a source record
/// updated later (`updated_at`), so a run again copies nothing twice and never overwrites what a broker on
/// PostgreSQL changed since; a delivery already there is left alone. A run killed between two batches keeps the
/// batches it committed, and the next run writes the rest. At the end both sides are counted.
enum StoreMigration {
    /// An account record as the source keeps it.
    struct AccountRecord: Sendable {
        /// The account id (`provider:uid`).
        var id: String
        /// The codec's bytes.
        var bytes: [UInt8]
        /// Where it was read, for errors.
        var origin: String
    }

    /// What the source holds.
    struct Source: Sendable {
        /// Every account record.
        var accounts: [AccountRecord]
        /// Every delivery of the outbox, pending and dropped.
        var deliveries: [WebhookDelivery]
        /// What it is, for the report (`files in ./data`, `redis://…`).
        var description: String
    }

    /// What a run found and did.
    struct Report: Sendable, Equatable {
        var sourceAccounts = 0
        var destinationAccounts = 0
        /// Rows inserted or replaced by this run.
        var copiedAccounts = 0
        /// Records that were plaintext and were sealed on the way.
        var sealedAccounts = 0
        var sourceDeliveries = 0
        var destinationDeliveries = 0
        var copiedDeliveries = 0
        /// Seconds spent writing and counting.
        var seconds = 0.0

        /// Whether both sides hold as many as the other.
        var countsMatch: Bool { sourceAccounts == destinationAccounts && sourceDeliveries == destinationDeliveries }

        /// The lines `token-broker migrate` prints.
        var text: String {
            let records = Double(sourceAccounts + sourceDeliveries)
            let rate = seconds > 0 ? Int((records / seconds).rounded()) : 0
            return """
                accounts: source \(sourceAccounts), destination \(destinationAccounts), copied by this run \(copiedAccounts)\
                \(sealedAccounts > 0 ? " (\(sealedAccounts) plaintext records sealed with the current key)" : "")
                webhook deliveries: source \(sourceDeliveries), destination \(destinationDeliveries), copied by this run \(copiedDeliveries)
                copy: \(String(format: "%.2f", seconds)) s, \(rate) records/s
                """
        }
    }

    /// Rows per `INSERT` statement.
    static let rowsPerStatement = 500
    /// Statements sent in one round trip (and one transaction).
    static let statementsPerBatch = 4

    /// Copies `source` into the database of `client` (its schema migrated first) and counts both sides.
    ///
    /// `afterBatch` is told how many accounts have been written so far after each committed batch; a test throws
    /// from it to interrupt the copy as a `kill` would between two batches.
    static func copy(
        _ source: Source, to client: PostgresClient, codec: EncryptedAccountCodec, rowsPerStatement: Int = rowsPerStatement,
        afterBatch: (Int) throws -> Void = { _ in }
    ) async throws -> Report {
        do {
            try await PostgresSchema.migrate(client)
        } catch {
            // Said as start-up says it: a newer broker migrated the database, and this one must not write into it.
            throw StartupError(message: "\(error)")
        }
        let started = ContinuousClock.now
        var report = Report(sourceAccounts: source.accounts.count, sourceDeliveries: source.deliveries.count)
        let perStatement = max(1, rowsPerStatement)
        var written = 0
        for batch in stride(from: 0, to: source.accounts.count, by: perStatement * statementsPerBatch) {
            let end = min(batch + perStatement * statementsPerBatch, source.accounts.count)
            var queries: [PostgresQuery] = []
            for start in stride(from: batch, to: end, by: perStatement) {
                let rows = source.accounts[start..<min(start + perStatement, end)]
                var parameters: [PostgresValue] = []
                parameters.reserveCapacity(rows.count * 10)
                for record in rows {
                    let (values, sealed) = try accountRow(record, codec: codec)
                    parameters += values
                    if sealed { report.sealedAccounts += 1 }
                }
                queries.append(PostgresQuery(accountInsert(rows: rows.count), parameters))
            }
            let results = try await client.pipeline(queries)
            report.copiedAccounts += results.reduce(0) { $0 + $1.affectedRows }
            written = end
            try afterBatch(written)
        }
        for batch in stride(from: 0, to: source.deliveries.count, by: perStatement) {
            let rows = source.deliveries[batch..<min(batch + perStatement, source.deliveries.count)]
            var parameters: [PostgresValue] = []
            for delivery in rows {
                parameters += [
                    .text(delivery.id), .text(delivery.eventID), .text(delivery.url), .int(Self.milliseconds(delivery.enqueuedAt)),
                    .int(Self.milliseconds(delivery.nextAttemptAt)), delivery.droppedAt.map { .int(Self.milliseconds($0)) } ?? .null,
                    .bytea(try delivery.encoded()),
                ]
            }
            let result = try await client.query(deliveryInsert(rows: rows.count), parameters)
            report.copiedDeliveries += result.affectedRows
        }
        // A broker already serving this database drops its cached accounts (an empty payload means "anything changed").
        _ = try await client.query("SELECT pg_notify('\(PostgresAccountRepository.channel)', '')")
        report.destinationAccounts = try await client.query("SELECT count(*) FROM accounts").rows.first?.int(0) ?? -1
        report.destinationDeliveries = try await client.query("SELECT count(*) FROM webhook_outbox").rows.first?.int(0) ?? -1
        let elapsed = ContinuousClock.now - started
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return report
    }

    /// The ten parameters of one account row, and whether its record was plaintext and sealed here.
    ///
    /// The indexed columns come from the record's readable part; its secrets are not decrypted.
    static func accountRow(_ record: AccountRecord, codec: EncryptedAccountCodec) throws(StoreError) -> ([PostgresValue], Bool) {
        let stored = try codec.storedAccount(record.bytes, path: record.origin)
        let account = stored.account
        guard ExactKey.same(account.id, record.id) else {
            throw .corrupt(path: record.origin, reason: "the record is account \(account.id), not \(record.id)")
        }
        var bytes = record.bytes
        var sealedHere = false
        // A plaintext record (written before encryption at rest) has nothing to open and is not sealed with any key.
        if stored.sealed == nil, try codec.needsRekey(record.bytes, path: record.origin) {
            bytes = try codec.encode(account)
            sealedHere = true
        }
        let tags: String
        if let data = try? JSONSerialization.data(withJSONObject: account.tags, options: [.sortedKeys]) {
            tags = String(decoding: data, as: UTF8.self)
        } else {
            tags = "{}"
        }
        return (
            [
                .text(account.id), .text(account.provider), .text(account.uid), account.endUser.map { .text($0.id) } ?? .null,
                .text(tags), .text(account.status.rawValue), account.expiresAt.map { .int(milliseconds($0)) } ?? .null,
                .int(milliseconds(account.updatedAt)), .bytea(bytes),
                AccountStatusCounts.expiryThatCounts(account).map { .int(milliseconds($0)) } ?? .null,
            ], sealedHere
        )
    }

    /// A multi-row insert of `rows` accounts; a row already there is replaced only by a later one.
    ///
    /// Every parameter is cast: in a multi-row `VALUES` list PostgreSQL would otherwise type them as text.
    static func accountInsert(rows: Int) -> String {
        var values: [String] = []
        values.reserveCapacity(rows)
        for row in 0..<rows {
            let p = row * 10
            values.append(
                "($\(p + 1)::text, $\(p + 2)::text, $\(p + 3)::text, $\(p + 4)::text, $\(p + 5)::jsonb, $\(p + 6)::text, "
                    + "$\(p + 7)::bigint, $\(p + 8)::bigint, $\(p + 9)::bytea, $\(p + 10)::bigint)")
        }
        return """
            INSERT INTO accounts (id, provider, uid, end_user, tags, status, expires_at, updated_at, record, counts_expired_at) VALUES
            \(values.joined(separator: ",\n"))
            ON CONFLICT (id) DO UPDATE SET provider = EXCLUDED.provider, uid = EXCLUDED.uid, end_user = EXCLUDED.end_user,
              tags = EXCLUDED.tags, status = EXCLUDED.status, expires_at = EXCLUDED.expires_at,
              updated_at = EXCLUDED.updated_at, record = EXCLUDED.record, counts_expired_at = EXCLUDED.counts_expired_at
            WHERE accounts.updated_at < EXCLUDED.updated_at
            """
    }

    /// A multi-row insert of `rows` deliveries; one already there is left as it is.
    static func deliveryInsert(rows: Int) -> String {
        var values: [String] = []
        for row in 0..<rows {
            let p = row * 7
            values.append(
                "($\(p + 1)::text, $\(p + 2)::text, $\(p + 3)::text, $\(p + 4)::bigint, $\(p + 5)::bigint, $\(p + 6)::bigint, $\(p + 7)::bytea)"
            )
        }
        return """
            INSERT INTO webhook_outbox (id, event_id, url, enqueued_at, due_at, dropped_at, record) VALUES
            \(values.joined(separator: ",\n"))
            ON CONFLICT (id) DO NOTHING
            """
    }

    /// Milliseconds since 1970, as the PostgreSQL back end stores times; clamped so no date traps.
    static func milliseconds(_ date: Date) -> Int {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard value.isFinite else { return value > 0 ? Int(1e15) : Int(-1e15) }
        return Int(min(max(value, -1e15), 1e15))
    }
}
