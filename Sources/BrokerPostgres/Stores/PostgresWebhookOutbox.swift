import BrokerCore
import BrokerCrypto
import Foundation

/// A ``WebhookOutbox`` in PostgreSQL, shared by every replica: a row per delivery in `webhook_outbox`.
///
/// `due_at` is when the next attempt may start; a claim moves a leased row's
/// `due_at` to the end of its lease and stamps `lease_token`, so a replica that
/// dies mid-attempt leaves the delivery due again when the lease runs out, for
/// any replica to take. Claims read the due rows `FOR UPDATE SKIP LOCKED`:
/// replicas claiming at once skip each other's rows instead of waiting, and
/// each delivery goes to one. Settling other than by success checks the token,
/// so a replica whose lease was taken over changes nothing. Dropped rows keep
/// `dropped_at` and are listed latest first until replayed or too old.
public final class PostgresWebhookOutbox: WebhookOutbox {
    /// The client the outbox talks through.
    public let client: PostgresClient

    /// Creates the outbox over `client`, whose database has ``PostgresSchema`` applied.
    public init(client: PostgresClient) {
        self.client = client
    }

    /// Inserts a delivery, or replaces the row of the same id (an append written again after an unknown outcome).
    static let insert = """
        INSERT INTO webhook_outbox (id, event_id, url, enqueued_at, due_at, record) VALUES ($1, $2, $3, $4, $5, $6::bytea)
        ON CONFLICT (id) DO UPDATE SET event_id = EXCLUDED.event_id, url = EXCLUDED.url, enqueued_at = EXCLUDED.enqueued_at,
          due_at = EXCLUDED.due_at, record = EXCLUDED.record, lease_token = NULL, lease_until = NULL, dropped_at = NULL
        """

    /// The statements that store `deliveries` as pending and due: what ``append(_:)`` runs, and what an account
    /// update runs in its own transaction to write the event with the change.
    func appendQueries(_ deliveries: [WebhookDelivery]) throws(StoreError) -> [PostgresQuery] {
        var queries: [PostgresQuery] = []
        for delivery in deliveries {
            queries.append(
                PostgresQuery(
                    Self.insert,
                    [
                        .text(delivery.id), .text(delivery.eventID), .text(delivery.url), .int(milliseconds(delivery.enqueuedAt)),
                        .int(milliseconds(delivery.nextAttemptAt)), .bytea(try delivery.encoded()),
                    ]))
        }
        return queries
    }

    /// Writes the rows in one round trip and one transaction.
    public func append(_ deliveries: [WebhookDelivery]) async throws(StoreError) {
        guard !deliveries.isEmpty else { return }
        let queries = try appendQueries(deliveries)
        do {
            _ = try await client.pipeline(queries)
        } catch {
            throw error.storeError
        }
    }

    /// Leases due rows, earliest due first, in one transaction that skips rows other replicas are claiming.
    ///
    /// Rows to a held receiver beyond its leases are set aside (their `due_at` moved to the hold's end, the record
    /// untouched) unless enqueued before its window ended. Every row looked at leaves the due range (leased or set
    /// aside), so each pass reads from the start; at most 2,048 are set aside per call, and the next call goes on.
    public func claim(
        limit: Int, now: Date, lease: Double, holding: [String: WebhookReceiverHold]
    ) async throws(StoreError) -> [WebhookLease] {
        guard limit > 0 else { return [] }
        let leaseMilliseconds = max(1, Int(min((lease * 1000).rounded(.up), 1e12)))
        let at = milliseconds(now)
        let until = at + leaseMilliseconds
        let token = SecureRandom.token(byteCount: 12)
        return try await client.storeTransaction { (connection) async throws -> [WebhookLease] in
            var left = holding.mapValues { max(0, $0.leases) }
            var leases: [WebhookLease] = []
            var budget = 2048
            while leases.count < limit && budget > 0 {
                let requested = limit - leases.count
                let rows = try await connection.run(
                    """
                    SELECT id, url, enqueued_at, record FROM webhook_outbox
                    WHERE dropped_at IS NULL AND due_at <= $1 ORDER BY due_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
                    """, [.int(at), .int(requested)])
                var updates: [PostgresQuery] = []
                for row in rows.rows {
                    guard let id = row.string(0), let url = row.string(1), let enqueued = row.int(2), let bytes = row.bytea(3) else {
                        continue
                    }
                    if let hold = holding[url], enqueued >= milliseconds(hold.windowEndedBefore) {
                        guard (left[url] ?? 0) > 0 else {
                            // Set aside past `now`, or this claim would meet it again at once.
                            let aside = max(milliseconds(hold.until), at + 1)
                            updates.append(PostgresQuery("UPDATE webhook_outbox SET due_at = $2 WHERE id = $1", [.text(id), .int(aside)]))
                            budget -= 1
                            continue
                        }
                        left[url, default: 0] -= 1
                    }
                    updates.append(
                        PostgresQuery(
                            "UPDATE webhook_outbox SET due_at = $2, lease_until = $2, lease_token = $3 WHERE id = $1",
                            [.text(id), .int(until), .text(token)]))
                    let delivery = try WebhookDelivery.decode(bytes, path: "postgres webhook_outbox row \(id)")
                    leases.append(WebhookLease(delivery: delivery, token: token))
                }
                if !updates.isEmpty {
                    _ = try await connection.run(updates, deadline: PostgresSocket.deadline(in: self.client.configuration.statementTimeout))
                }
                // Fewer than asked for: no other due row is free now.
                if rows.rows.count < requested { break }
            }
            return leases
        }
    }

    /// Deletes the row: delivered is delivered, whoever holds the lease now.
    public func complete(_ lease: WebhookLease) async throws(StoreError) {
        _ = try await client.storeQuery("DELETE FROM webhook_outbox WHERE id = $1", [.text(lease.delivery.id)])
    }

    /// Stores the updated record and due time, only under this lease.
    public func reschedule(_ lease: WebhookLease, as updated: WebhookDelivery) async throws(StoreError) {
        _ = try await client.storeQuery(
            """
            UPDATE webhook_outbox SET record = $3::bytea, due_at = $4, lease_token = NULL, lease_until = NULL
            WHERE id = $1 AND lease_token = $2 AND dropped_at IS NULL
            """, [.text(updated.id), .text(lease.token), .bytea(try updated.encoded()), .int(milliseconds(updated.nextAttemptAt))])
    }

    /// Marks the row dropped, only under this lease, and forgets dropped rows too old or beyond the number kept.
    public func drop(_ lease: WebhookLease, as updated: WebhookDelivery) async throws(StoreError) {
        let at = updated.droppedAt ?? Date()
        let cutoff = at.addingTimeInterval(-WebhookRetention.droppedFor)
        let record = try updated.encoded()
        do {
            _ = try await client.pipeline([
                PostgresQuery(
                    """
                    UPDATE webhook_outbox SET record = $3::bytea, dropped_at = $4, lease_token = NULL, lease_until = NULL
                    WHERE id = $1 AND lease_token = $2 AND dropped_at IS NULL
                    """, [.text(updated.id), .text(lease.token), .bytea(record), .int(milliseconds(at))]),
                PostgresQuery("DELETE FROM webhook_outbox WHERE dropped_at < $1", [.int(milliseconds(cutoff))]),
                PostgresQuery(
                    """
                    DELETE FROM webhook_outbox WHERE id IN (
                      SELECT id FROM webhook_outbox WHERE dropped_at IS NOT NULL ORDER BY dropped_at DESC, id DESC OFFSET $1)
                    """, [.int(WebhookRetention.droppedCount)]),
            ])
        } catch {
            throw error.storeError
        }
    }

    /// A page of pending rows by due time and of dropped rows latest first, each from where `cursor` left it.
    public func list(limit: Int, cursor: WebhookListCursor?) async throws(StoreError) -> WebhookOutboxListing {
        let limit = max(1, limit)
        let (pending, pendingNext) = try await page(dropped: false, from: cursor?.pending ?? .start, limit: limit)
        let (dropped, droppedNext) = try await page(dropped: true, from: cursor?.dropped ?? .start, limit: limit)
        let next = WebhookListCursor(pending: pendingNext, dropped: droppedNext)
        return WebhookOutboxListing(
            pending: pending, dropped: dropped, stats: try await stats(),
            next: next == WebhookListCursor(pending: .end, dropped: .end) ? nil : next)
    }

    /// Up to `limit` pending (by `due_at`, `id`) or dropped (by `dropped_at`, `id`, descending) rows after `position`.
    private func page(
        dropped: Bool, from position: WebhookListCursor.Position, limit: Int
    ) async throws(StoreError) -> ([WebhookDelivery], WebhookListCursor.Position) {
        let column = dropped ? "dropped_at" : "due_at"
        var condition = dropped ? "dropped_at IS NOT NULL" : "dropped_at IS NULL"
        var parameters: [PostgresValue] = [.int(limit + 1)]
        switch position {
        case .end: return ([], .end)
        case .start: break
        case .after(let at, let id):
            condition += " AND (\(column), id) \(dropped ? "<" : ">") ($2, $3)"
            parameters += [.int(Int(at)), .text(id)]
        }
        let order = dropped ? "dropped_at DESC, id DESC" : "due_at, id"
        let rows = try await client.storeQuery(
            "SELECT id, \(column), record FROM webhook_outbox WHERE \(condition) ORDER BY \(order) LIMIT $1", parameters)
        var deliveries: [WebhookDelivery] = []
        var last: (Int64, String)?
        for row in rows.rows.prefix(limit) {
            guard let id = row.string(0), let at = row.int(1), let bytes = row.bytea(2) else { continue }
            deliveries.append(try WebhookDelivery.decode(bytes, path: "postgres webhook_outbox row \(id)"))
            last = (Int64(at), id)
        }
        let next: WebhookListCursor.Position =
            rows.rows.count > limit ? last.map { .after(milliseconds: $0.0, id: $0.1) } ?? .end : .end
        return (deliveries, next)
    }

    /// Makes delivery `id`, or every delivery of event `id`, pending and due at `now` with no attempts; how many it found.
    public func replay(id: String, now: Date) async throws(StoreError) -> Int {
        let byEvent = !id.contains(".")
        let at = milliseconds(now)
        return try await client.storeTransaction { (connection) async throws -> Int in
            let rows = try await connection.run(
                "SELECT id, record FROM webhook_outbox WHERE \(byEvent ? "event_id" : "id") = $1 ORDER BY id FOR UPDATE", [.text(id)])
            var updates: [PostgresQuery] = []
            for row in rows.rows {
                guard let rowID = row.string(0), let bytes = row.bytea(1) else { continue }
                var delivery = try WebhookDelivery.decode(bytes, path: "postgres webhook_outbox row \(rowID)")
                delivery.attempts = 0
                delivery.droppedAt = nil
                delivery.enqueuedAt = now
                delivery.nextAttemptAt = now
                updates.append(
                    PostgresQuery(
                        """
                        UPDATE webhook_outbox SET record = $2::bytea, due_at = $3, enqueued_at = $3, dropped_at = NULL,
                          lease_token = NULL, lease_until = NULL WHERE id = $1
                        """, [.text(rowID), .bytea(try delivery.encoded()), .int(at)]))
            }
            if !updates.isEmpty {
                _ = try await connection.run(updates, deadline: PostgresSocket.deadline(in: self.client.configuration.statementTimeout))
            }
            return updates.count
        }
    }

    /// The counts and the oldest pending enqueue time, in one statement.
    public func stats() async throws(StoreError) -> WebhookOutboxStats {
        let rows = try await client.storeQuery(
            """
            SELECT count(*) FILTER (WHERE dropped_at IS NULL), count(*) FILTER (WHERE dropped_at IS NOT NULL),
              min(enqueued_at) FILTER (WHERE dropped_at IS NULL)
            FROM webhook_outbox
            """)
        let row = rows.rows.first
        return WebhookOutboxStats(
            pending: row?.int(0) ?? 0, dropped: row?.int(1) ?? 0,
            oldestPendingEnqueuedAt: row?.int(2).map { Date(timeIntervalSince1970: Double($0) / 1000) })
    }
}
