import BrokerCore
import Foundation

/// One line of the webhook outbox journal: a delivery's latest state, or the end of a delivery.
///
/// Lines are compact JSON objects ending in a newline, each written with one `write`:
///
///     {"put":{"attempts":0,"body":"{…}","enqueued_at":…,"event_id":"evt_…","id":"evt_….0",…}}
///     {"done":"evt_….0"}
///
/// Every change of a delivery (recorded, rescheduled, dropped, replayed)
/// appends its whole new state as a `put`; `done` is written when a receiver
/// took it or a dropped delivery is forgotten.
enum OutboxJournalRecord: Equatable {
    /// The delivery's state from this line on.
    case put(WebhookDelivery)
    /// The delivery with this id is gone.
    case done(String)

    /// The line for a put of `delivery`, newline included.
    static func encodePut(_ delivery: WebhookDelivery) throws(StoreError) -> [UInt8] {
        var bytes = Array("{\"put\":".utf8)
        bytes += try delivery.encoded()
        bytes += Array("}\n".utf8)
        return bytes
    }

    /// The line for the end of delivery `id`, newline included.
    static func encodeDone(id: String) -> [UInt8] {
        // Ids are `evt_<hex>.<digits>`: nothing in them needs escaping.
        Array("{\"done\":\"\(id)\"}\n".utf8)
    }

    /// The JSON shape of a line: exactly one of the two fields is present.
    private struct Line: Decodable {
        var put: WebhookDelivery?
        var done: String?
    }

    /// The record on one line (without its newline), or nil when the line is not a well-formed record.
    static func decode(_ line: ArraySlice<UInt8>) -> OutboxJournalRecord? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        guard let parsed = try? decoder.decode(Line.self, from: Data(line)) else { return nil }
        switch (parsed.put, parsed.done) {
        case (let delivery?, nil) where isDeliveryID(delivery.id): return .put(delivery)
        case (nil, let id?) where isDeliveryID(id): return .done(id)
        default: return nil
        }
    }

    /// Whether `id` has the shape of a delivery id: `evt_`, hex digits, a dot, decimal digits.
    static func isDeliveryID(_ id: String) -> Bool {
        let parts = id.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].starts(with: "evt_".utf8), parts[0].count > 4, parts[0].count <= 68,
            !parts[1].isEmpty, parts[1].count <= 3
        else { return false }
        let hex = parts[0].dropFirst(4)
        return hex.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
            && parts[1].allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
