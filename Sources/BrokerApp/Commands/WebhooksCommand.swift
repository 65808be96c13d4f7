import BrokerCore
import Foundation

/// `token-broker webhooks list` and `token-broker webhooks replay ID`: the running broker's outbox, through its API.
///
/// The outbox belongs to the running broker (the file store's journal is
/// held by its process), so the command asks the broker on the configured
/// port with `BROKER_API_KEY`, as a back end would: `GET /webhooks` and
/// `POST /webhooks/replay?id=ID`.
public enum WebhooksCommand: Equatable, Sendable {
    /// Print the pending and dropped deliveries.
    case list
    /// Make a delivery, or every delivery of an event, due now.
    case replay(String)

    /// Runs the command against the broker `configuration` describes; the exit status and what to print (stdout when 0, stderr otherwise).
    public func run(configuration c: BrokerConfiguration, timeout: Double = 10) async -> (status: Int32, output: String) {
        guard let key = c.callerKeys.first?.key else {
            return (2, "BROKER_API_KEY or BROKER_API_KEYS must be set: the command asks the running broker through its API")
        }
        let host: String
        switch c.server.host {
        case "0.0.0.0": host = "127.0.0.1"
        case "::": host = "[::1]"
        default: host = c.server.host.contains(":") ? "[\(c.server.host)]" : c.server.host
        }
        let base = "http://\(host):\(c.server.port)"
        let request: UpstreamRequest
        switch self {
        case .list:
            request = UpstreamRequest(method: "GET", url: base + "/webhooks", headers: [("Authorization", "Bearer " + key.value)])
        case .replay(let id):
            let escaped = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id
            request = UpstreamRequest(
                method: "POST", url: base + "/webhooks/replay?id=" + escaped,
                headers: [("Authorization", "Bearer " + key.value)])
        }
        let response: UpstreamResponse
        do {
            response = try await EpollUpstreamClient(timeout: timeout).send(request)
        } catch {
            return (1, "cannot reach the broker at \(base): \(error) (is it running on BROKER_PORT?)")
        }
        let body = String(decoding: response.body, as: UTF8.self)
        guard response.status == 200 else {
            let message = (try? JSONDecoder().decode([String: String].self, from: Data(response.body)))?["message"] ?? body
            return (1, "the broker answered \(response.status): \(message)")
        }
        switch self {
        case .list: return (0, Self.table(response.body) ?? body)
        case .replay(let id): return (0, "replayed \(Self.replayed(response.body) ?? 0) delivery(ies) of \(id)")
        }
    }

    /// The listing as text: counts, then one line per delivery.
    static func table(_ body: [UInt8]) -> String? {
        struct Item: Decodable {
            var id: String
            var type: String
            var account_id: String?
            var url: String
            var attempts: Int
            var next_attempt_at: String?
            var last_error: String?
            var dropped_at: String?
        }
        struct Listing: Decodable {
            var pending_count: Int
            var dropped_count: Int
            var oldest_pending_enqueued_at: String?
            var pending: [Item]
            var dropped: [Item]
        }
        guard let listing = try? JSONDecoder().decode(Listing.self, from: Data(body)) else { return nil }
        var lines = [
            "pending: \(listing.pending_count)" + (listing.oldest_pending_enqueued_at.map { ", oldest enqueued \($0)" } ?? ""),
            "dropped: \(listing.dropped_count)",
        ]
        func line(_ item: Item, _ when: String) -> String {
            [
                item.id, item.type, item.account_id ?? "-", "attempts=\(item.attempts)", when,
                "error=\(item.last_error ?? "-")", item.url,
            ].joined(separator: "  ")
        }
        if !listing.pending.isEmpty { lines.append("PENDING") }
        lines += listing.pending.map { line($0, "next=\($0.next_attempt_at ?? "-")") }
        if !listing.dropped.isEmpty { lines.append("DROPPED") }
        lines += listing.dropped.map { line($0, "dropped=\($0.dropped_at ?? "-")") }
        return lines.joined(separator: "\n")
    }

    /// The count in a replay answer.
    static func replayed(_ body: [UInt8]) -> Int? {
        (try? JSONDecoder().decode([String: Int].self, from: Data(body)))?["replayed"]
    }
}
