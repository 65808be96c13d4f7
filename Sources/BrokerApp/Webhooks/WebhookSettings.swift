import BrokerCore
import Foundation

/// The webhook settings: where events go, how they are signed, which are sent, and how failed deliveries are retried.
///
/// Read from `BROKER_WEBHOOK_*` by ``read(_:)``; nil in ``BrokerConfiguration/webhooks`` when no URL is set.
public struct WebhookSettings: Sendable, Equatable {
    /// The receivers (`BROKER_WEBHOOK_URL`, comma-separated): each gets every chosen event.
    public var urls: [String]
    /// The HMAC-SHA256 key of `Broker-Signature` (`BROKER_WEBHOOK_SECRET`, at least 32 bytes).
    public var secret: Secret
    /// The event types sent (`BROKER_WEBHOOK_EVENTS`; all when unset).
    public var events: Set<BrokerEventType>
    /// Seconds a receiver has to answer one attempt (`BROKER_WEBHOOK_TIMEOUT`).
    public var timeout: Double
    /// Backoff and giving up (`BROKER_WEBHOOK_RETRY_BASE`, `BROKER_WEBHOOK_RETRY_CAP`, `BROKER_WEBHOOK_RETRY_FOR`).
    public var retry: WebhookRetryPolicy

    /// The largest answer body read from a receiver; what it says is not used, only its status.
    public static let maxResponseBytes = 64 << 10
    /// The shortest secret accepted, in bytes.
    public static let minimumSecretBytes = 32

    /// The settings in `env`, or nil when `BROKER_WEBHOOK_URL` is unset; a bad value names its variable.
    static func read(_ env: EnvironmentReader) throws(ConfigurationError) -> WebhookSettings? {
        guard let list = env.raw("BROKER_WEBHOOK_URL") else { return nil }
        var urls: [String] = []
        for item in list.split(separator: ",") {
            let text = item.trimmingCharacters(in: .whitespaces)
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = url.host, !host.isEmpty, url.user == nil, url.password == nil, url.fragment == nil
            else {
                throw ConfigurationError(
                    variable: "BROKER_WEBHOOK_URL",
                    message:
                        "each entry must be an http or https URL such as https://app.example.com/hooks/broker, without user information")
            }
            guard !urls.contains(text) else {
                throw ConfigurationError(variable: "BROKER_WEBHOOK_URL", message: "lists \(WebhookDelivery.displayURL(text)) twice")
            }
            urls.append(text)
        }
        guard !urls.isEmpty else { throw ConfigurationError(variable: "BROKER_WEBHOOK_URL", message: "holds no URL") }
        guard urls.count <= WebhookDelivery.maximumURLs else {
            throw ConfigurationError(
                variable: "BROKER_WEBHOOK_URL", message: "lists \(urls.count) URLs; at most \(WebhookDelivery.maximumURLs) are allowed")
        }
        guard let secret = env.raw("BROKER_WEBHOOK_SECRET") else {
            throw ConfigurationError(
                variable: "BROKER_WEBHOOK_SECRET",
                message: "must be set when BROKER_WEBHOOK_URL is set (at least \(minimumSecretBytes) bytes, e.g. openssl rand -hex 32)")
        }
        guard secret.utf8.count >= minimumSecretBytes else {
            throw ConfigurationError(
                variable: "BROKER_WEBHOOK_SECRET",
                message: "must be at least \(minimumSecretBytes) bytes long (got \(secret.utf8.count))")
        }
        var events = Set(BrokerEventType.allCases)
        if let chosen = env.raw("BROKER_WEBHOOK_EVENTS") {
            events = []
            for item in chosen.split(separator: ",") {
                let name = item.trimmingCharacters(in: .whitespaces)
                guard let type = BrokerEventType(rawValue: name) else {
                    let allowed = BrokerEventType.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ConfigurationError(
                        variable: "BROKER_WEBHOOK_EVENTS", message: "must list event types among \(allowed), got \"\(name)\"")
                }
                events.insert(type)
            }
            guard !events.isEmpty else { throw ConfigurationError(variable: "BROKER_WEBHOOK_EVENTS", message: "holds no event type") }
        }
        let timeout = try env.seconds("BROKER_WEBHOOK_TIMEOUT", default: 5)
        let base = try env.seconds("BROKER_WEBHOOK_RETRY_BASE", default: 10)
        let cap = try env.seconds("BROKER_WEBHOOK_RETRY_CAP", default: 3600)
        guard cap >= base else {
            throw ConfigurationError(variable: "BROKER_WEBHOOK_RETRY_CAP", message: "must be at least BROKER_WEBHOOK_RETRY_BASE (\(base))")
        }
        let retryFor = try env.integer("BROKER_WEBHOOK_RETRY_FOR", default: 86_400, range: 1...30 * 86_400)
        return WebhookSettings(
            urls: urls, secret: Secret(secret), events: events, timeout: timeout,
            retry: WebhookRetryPolicy(base: base, cap: cap, retryFor: TimeInterval(retryFor)))
    }
}

extension WebhookSettings {
    /// The `config check` lines of `settings`: receivers without query or user information, the secret as set.
    static func report(_ settings: WebhookSettings?) -> [(String, String)] {
        guard let s = settings else { return [("BROKER_WEBHOOK_URL", "unset (no webhooks)")] }
        let events = BrokerEventType.allCases.filter(s.events.contains).map(\.rawValue).joined(separator: ",")
        return [
            ("BROKER_WEBHOOK_URL", s.urls.map(WebhookDelivery.displayURL).joined(separator: ",")),
            ("BROKER_WEBHOOK_SECRET", "set"), ("BROKER_WEBHOOK_EVENTS", events),
            ("BROKER_WEBHOOK_TIMEOUT", "\(s.timeout) s"),
            ("BROKER_WEBHOOK_RETRY_BASE", "\(s.retry.base) s"), ("BROKER_WEBHOOK_RETRY_CAP", "\(s.retry.cap) s"),
            ("BROKER_WEBHOOK_RETRY_FOR", "\(Int(s.retry.retryFor)) s"),
        ]
    }
}
