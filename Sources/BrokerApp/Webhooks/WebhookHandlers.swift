import BrokerCore
import BrokerHTTP
import Foundation

/// The operator's view of the webhook outbox, behind the API key: `GET /webhooks` and `POST /webhooks/replay?id=ID`.
///
/// Listings show ids, types, accounts, receivers (without query or user
/// information), attempts and errors; never an event body, which holds no
/// secret but is the receiver's business. `token-broker webhooks` calls these.
struct WebhookHandlers: Sendable {
    /// The machinery, nil when no webhook URL is configured.
    let webhooks: Webhooks?
    /// Checks the API key.
    let access: AccessControl
    /// The wall clock, for replayed deliveries' due time.
    let wallClock: @Sendable () -> Date

    /// The most deliveries of each kind a page shows unless `limit` says otherwise.
    static let listLimit = 100
    /// The largest `limit`, as for `/accounts`.
    static let maximumLimit = 1000
    /// What the listing's cursors are bound to (``ListingCursor``): this listing, which takes no filter.
    static let cursorScope = "\"webhooks\""

    /// `GET /webhooks?limit=N&cursor=C`: counts, then a page of the pending deliveries (earliest due first) and one of
    /// the dropped ones (latest first), at most `limit` (default ``listLimit``) each, and `next_cursor` for the next
    /// page of both lists (null on the last).
    func list(_ request: Request) async -> Response {
        do {
            _ = try access.authorize(request, .admin)
            try StrictInput.query(request, allowed: ["limit", "cursor"])
        } catch { return error.response }
        guard let webhooks else { return Self.notConfigured }
        var limit = Self.listLimit
        if let text = request.query("limit") {
            guard let value = OwnerParameters.decimal(text), (1...Self.maximumLimit).contains(value) else {
                return BrokerError.badRequest("limit must be an integer from 1 to \(Self.maximumLimit).").response
            }
            limit = value
        }
        var cursor: WebhookListCursor?
        if let text = request.query("cursor") {
            // Signed as the cursors of /accounts are, so a made-up one is refused rather than read as a position.
            let cursors = ListingCursor(secret: access.cookieSecret)
            guard let position = cursors.after(text, scope: Self.cursorScope), let parsed = WebhookListCursor(encoded: position) else {
                return BrokerError.badRequest("cursor is not one this broker gave out.").response
            }
            cursor = parsed
        }
        do {
            let listing = try await webhooks.outbox.list(limit: limit, cursor: cursor)
            let cursors = ListingCursor(secret: access.cookieSecret)
            let next = listing.next.map { JSONString.quote(cursors.cursor(after: $0.encoded, scope: Self.cursorScope)) } ?? "null"
            let body =
                "{\"pending_count\":\(listing.stats.pending),\"dropped_count\":\(listing.stats.dropped),"
                + "\"oldest_pending_enqueued_at\":\(AccountJSON.date(listing.stats.oldestPendingEnqueuedAt)),"
                + "\"pending\":[" + listing.pending.map(Self.json).joined(separator: ",") + "],"
                + "\"dropped\":[" + listing.dropped.map(Self.json).joined(separator: ",") + "],"
                + "\"next_cursor\":" + next + "}"
            return Response.json(.ok, body, headers: Self.noStore)
        } catch {
            return BrokerError.storageUnavailable(error.message).response
        }
    }

    /// `POST /webhooks/replay?id=ID`: makes a delivery (`evt_….0`) or every delivery of an event (`evt_…`) pending and due now, with a fresh retry window.
    func replay(_ request: Request) async -> Response {
        do {
            _ = try access.authorize(request, .admin)
            try StrictInput.query(request, allowed: ["id"])
        } catch { return error.response }
        guard let webhooks else { return Self.notConfigured }
        guard let id = request.query("id"), !id.isEmpty, id.utf8.count <= 128 else {
            return BrokerError.badRequest("Give the delivery or event id to replay as ?id=").response
        }
        do {
            let count = try await webhooks.outbox.replay(id: id, now: wallClock())
            guard count > 0 else {
                return Response.error(
                    .notFound, code: "not_found",
                    message: "No pending or dropped webhook delivery has this id; delivered ones are not kept.",
                    headers: Self.noStore)
            }
            webhooks.dispatcher.wake()
            return Response.json(.ok, "{\"replayed\":\(count)}", headers: Self.noStore)
        } catch {
            return BrokerError.storageUnavailable(error.message).response
        }
    }

    /// One delivery as listed.
    static func json(_ d: WebhookDelivery) -> String {
        var json = JSONObjectWriter()
        json.string("id", d.id)
        json.string("event_id", d.eventID)
        json.string("type", d.eventType)
        json.string("account_id", d.accountID?.string)
        json.string("url", d.displayURL)
        json.raw("attempts", String(d.attempts))
        json.raw("enqueued_at", AccountJSON.date(d.enqueuedAt))
        json.raw("next_attempt_at", AccountJSON.date(d.droppedAt == nil ? d.nextAttemptAt : nil))
        json.string("last_error", d.lastError)
        json.raw("dropped_at", AccountJSON.date(d.droppedAt))
        return String(decoding: json.finish(), as: UTF8.self)
    }

    private static var noStore: HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Cache-Control", value: "no-store")
        return headers
    }

    private static var notConfigured: Response {
        Response.error(.notFound, code: "not_found", message: "Webhooks are not configured: set BROKER_WEBHOOK_URL.", headers: noStore)
    }
}
