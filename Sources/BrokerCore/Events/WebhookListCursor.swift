import BrokerCrypto
import Foundation

/// Where a page of the outbox listing ends: a position in the pending list and one in the dropped list.
///
/// Each list is ordered by a millisecond time and then the delivery id (the
/// pending list by when the next attempt is due, the dropped list by when it was
/// dropped, latest first), so a position is the last (time, id) shown, and the
/// next page starts just past it: deliveries that come and go between pages
/// do not shift the others. Sent as an opaque base64url string.
public struct WebhookListCursor: Sendable, Equatable {
    /// A place in one list.
    public enum Position: Sendable, Equatable {
        /// Nothing of the list shown yet.
        case start
        /// Shown up to and including the delivery with this time (milliseconds since 1970) and id.
        case after(milliseconds: Int64, id: String)
        /// The list ended on an earlier page.
        case end
    }

    /// Where the pending list stands.
    public var pending: Position
    /// Where the dropped list stands.
    public var dropped: Position

    /// Creates a cursor.
    public init(pending: Position, dropped: Position) {
        self.pending = pending
        self.dropped = dropped
    }

    /// The cursor as sent to a client: base64url of `1 <pending> <dropped>`, each `-`, `end` or `<ms>:<id>`.
    public var encoded: String {
        func text(_ position: Position) -> String {
            switch position {
            case .start: "-"
            case .after(let milliseconds, let id): "\(milliseconds):\(id)"
            case .end: "end"
            }
        }
        return Base64URL.encode(Array("1 \(text(pending)) \(text(dropped))".utf8))
    }

    /// Reads a cursor ``encoded`` made; nil for anything else (the caller answers 400).
    public init?(encoded: String) {
        guard encoded.utf8.count <= 256, let bytes = Base64URL.decode(encoded) else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "1", let pending = Self.position(parts[1]), let dropped = Self.position(parts[2])
        else { return nil }
        self.init(pending: pending, dropped: dropped)
    }

    /// One list's position from its text, or nil when it is malformed.
    private static func position(_ text: Substring) -> Position? {
        switch text {
        case "-": return .start
        case "end": return .end
        default:
            guard let colon = text.firstIndex(of: ":"), let milliseconds = Int64(text[..<colon]), milliseconds >= 0,
                text[..<colon].allSatisfy(\.isASCII), text[..<colon].first != "+"
            else { return nil }
            let id = String(text[text.index(after: colon)...])
            guard WebhookDelivery.isWellFormedID(id) else { return nil }
            return .after(milliseconds: milliseconds, id: id)
        }
    }
}

extension WebhookDelivery {
    /// Whether `id` has the shape of a delivery id: `evt_`, 1–64 lowercase hex digits, a dot, 1–3 decimal digits.
    public static func isWellFormedID(_ id: String) -> Bool {
        let parts = id.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].starts(with: "evt_".utf8), parts[0].count > 4, parts[0].count <= 68,
            !parts[1].isEmpty, parts[1].count <= 3
        else { return false }
        let hex = parts[0].dropFirst(4)
        return hex.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
            && parts[1].allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// Milliseconds since 1970, rounded down: how listings and cursors order times.
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}
