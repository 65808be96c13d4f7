import Foundation

/// One event on its way to one receiver URL: what the outbox stores and the dispatcher sends.
///
/// An event sent to several URLs is several deliveries, `<event id>.0`,
/// `<event id>.1`…, each retried on its own, so a receiver that is down does not
/// make the others get the event twice. The body is the event's JSON exactly
/// as it was first recorded; every attempt sends those bytes.
public struct WebhookDelivery: Sendable, Equatable, Codable {
    /// `<event id>.<index of the URL>`.
    public var id: String
    /// The event's id, sent as `Broker-Event-Id`.
    public var eventID: String
    /// The event's type, for logs, metrics and `webhooks list`.
    public var eventType: String
    /// The account it is about, when there is one, for `webhooks list`.
    public var accountID: AccountID?
    /// The receiver.
    public var url: String
    /// The event's JSON.
    public var body: String
    /// When the outbox took it, by the wall clock: retries stop a fixed time after this.
    public var enqueuedAt: Date
    /// Attempts made so far.
    public var attempts: Int
    /// When the next attempt is due.
    public var nextAttemptAt: Date
    /// Why the last attempt failed (`HTTP 500`, `timeout`…), for `webhooks list`; never a response body.
    public var lastError: String?
    /// When the dispatcher gave up on it; nil while it is pending.
    public var droppedAt: Date?

    /// Creates a pending delivery with no attempt made, due at `enqueuedAt`.
    public init(id: String, eventID: String, eventType: String, accountID: AccountID?, url: String, body: String, enqueuedAt: Date) {
        self.id = id
        self.eventID = eventID
        self.eventType = eventType
        self.accountID = accountID
        self.url = url
        self.body = body
        self.enqueuedAt = enqueuedAt
        self.attempts = 0
        self.nextAttemptAt = enqueuedAt
    }

    /// The ids the deliveries of event `eventID` can have: one per receiver URL, at most ``maximumURLs``.
    public static func ids(ofEvent eventID: String) -> [String] {
        (0..<maximumURLs).map { "\(eventID).\($0)" }
    }

    /// The most receiver URLs an event goes to.
    public static let maximumURLs = 8

    /// The URL as it may be shown in logs and listings: without query, fragment or user information, which may hold a token.
    public var displayURL: String {
        Self.displayURL(url)
    }

    /// `url` without query, fragment or user information.
    public static func displayURL(_ url: String) -> String {
        guard var parts = URLComponents(string: url) else { return "(invalid URL)" }
        parts.user = nil
        parts.password = nil
        parts.query = nil
        parts.fragment = nil
        return parts.string ?? "(invalid URL)"
    }

    private enum CodingKeys: String, CodingKey {
        case id
        case eventID = "event_id"
        case eventType = "type"
        case accountID = "account_id"
        case url, body
        case enqueuedAt = "enqueued_at"
        case attempts
        case nextAttemptAt = "next_attempt_at"
        case lastError = "last_error"
        case droppedAt = "dropped_at"
    }
}

extension WebhookDelivery {
    /// The stored JSON of a delivery, keys sorted, dates as milliseconds since 1970.
    public func encoded() throws(StoreError) -> [UInt8] {
        do {
            return Array(try Self.encoder.encode(self))
        } catch {
            throw .unavailable("encode webhook delivery \(id): \(type(of: error))")
        }
    }

    /// A delivery from its stored JSON; `path` names where it was read, for the error.
    public static func decode(_ bytes: some Collection<UInt8>, path: String) throws(StoreError) -> WebhookDelivery {
        do {
            return try decoder.decode(WebhookDelivery.self, from: Data(bytes))
        } catch {
            throw .corrupt(path: path, reason: "not a webhook delivery record")
        }
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }
}
