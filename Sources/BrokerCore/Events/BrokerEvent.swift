import Foundation

/// One webhook event: what happened, to what, and when, under an id that stays the same on every retry.
public struct BrokerEvent: Sendable, Equatable {
    /// Unique and stable across retries: `evt_` and 32 hex digits; receivers drop duplicates by it.
    public var id: String
    /// What happened.
    public var type: BrokerEventType
    /// When the broker recorded it (the injected clock).
    public var createdAt: Date
    /// The account or sign-in it is about.
    public var data: BrokerEventData

    /// Creates an event.
    public init(id: String, type: BrokerEventType, createdAt: Date, data: BrokerEventData) {
        self.id = id
        self.type = type
        self.createdAt = createdAt
        self.data = data
    }

    /// The JSON body receivers get, keys sorted: `{"created_at","data","id","type"}`.
    ///
    /// Made once when the event is recorded and stored as is, so every retry
    /// sends the same bytes.
    public func body() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Only strings, booleans and arrays of strings: encoding cannot fail.
        return (try? Array(encoder.encode(Wire(self)))) ?? []
    }

    /// The JSON shape of an event.
    private struct Wire: Encodable {
        let id: String
        let type: String
        let createdAt: String
        let data: BrokerEventData

        init(_ event: BrokerEvent) {
            id = event.id
            type = event.type.rawValue
            createdAt = RFC3339Date.formatWithMillis(event.createdAt)
            data = event.data
        }

        private enum CodingKeys: String, CodingKey {
            case id, type
            case createdAt = "created_at"
            case data
        }
    }
}
