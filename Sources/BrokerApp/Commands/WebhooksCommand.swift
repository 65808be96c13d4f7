import BrokerCore
import BrokerCrypto
import Foundation

/// `token-broker webhooks list` and `token-broker webhooks replay ID`: the running broker's outbox, through its API.
///
/// The outbox belongs to the running broker (the file store's journal is
/// held by its process), so the command asks the broker with `BROKER_API_KEY`,
/// as a back end would: `GET /webhooks` and `POST /webhooks/replay?id=ID`, at
/// `BROKER_URL` like `token-broker accounts`, or on the configured port when it is unset.
public enum WebhooksCommand: Equatable, Sendable {
    /// Print the pending and dropped deliveries.
    case list
    /// Make a delivery, or every delivery of an event, due now.
    case replay(String)

    /// Runs the command against the broker at `BROKER_URL` in `environment`, else on the port `configuration` names;
    /// the exit status and what to print (stdout when 0, stderr otherwise). A refusal names the URL that refused.
    public func run(
        configuration c: BrokerConfiguration, environment: [String: String] = [:], timeout: Double = 10,
        upstream: (any UpstreamClient)? = nil
    ) async -> (status: Int32, output: String) {
        guard let key = c.callerKeys.first?.key else {
            return (2, "BROKER_API_KEY or BROKER_API_KEYS must be set: the command asks the running broker through its API")
        }
        // Like `accounts`: BROKER_URL says where the broker is (another host, a path prefix); without it, this host's port.
        var settings = environment
        settings["BROKER_API_KEY"] = key.value
        if settings["BROKER_URL"] == nil { settings["BROKER_URL"] = Self.localURL(c) }
        let (method, target) =
            switch self {
            case .list: ("GET", "/webhooks")
            case .replay(let id): ("POST", "/webhooks/replay?id=" + PercentEncoding.rfc3986(id))
            }
        let exchange = await AccountsClient.send(
            method, target, environment: settings, upstream: upstream, timeout: timeout, userAgent: "webhooks")
        let baseURL: String, response: UpstreamResponse
        switch exchange {
        case .answered(let url, let answer): (baseURL, response) = (url, answer)
        case .failed(let outcome): return (outcome.status, outcome.failure?.reason ?? "")
        }
        let body = String(decoding: response.body, as: UTF8.self)
        guard response.status == 200 else {
            return (1, "the broker refused: " + AccountsClient.refusal(response, method: method, target: target, baseURL: baseURL))
        }
        switch self {
        case .list: return (0, Self.table(response.body) ?? body)
        case .replay(let id): return (0, "replayed \(Self.replayed(response.body) ?? 0) delivery(ies) of \(id)")
        }
    }

    /// `http://HOST:PORT` of the configured listener, a wildcard address taken as loopback.
    static func localURL(_ c: BrokerConfiguration) -> String {
        let host: String
        switch c.server.host {
        case "0.0.0.0": host = "127.0.0.1"
        case "::": host = "[::1]"
        default: host = c.server.host.contains(":") ? "[\(c.server.host)]" : c.server.host
        }
        return "http://\(host):\(c.server.port)"
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
