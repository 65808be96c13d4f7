import BrokerCore
import BrokerCrypto
import Foundation

/// One line of the webhook outbox journal: a delivery's latest state, a delivery staged or committed, or its end.
///
/// Lines are compact JSON objects ending in a newline, each written with one `write`:
///
///     {"put":{"attempts":0,"body":"{…}","enqueued_at":…,"event_id":"evt_…","id":"evt_….0",…}}
///     {"stage":{"account":"github:1","sha256":"…"},"put":{…}}
///     {"commit":"evt_….0"}
///     {"done":"evt_….0"}
///
/// Every change of a delivery (recorded, rescheduled, dropped, replayed)
/// appends its whole new state as a `put`; `done` is written when a receiver
/// took it, a dropped delivery is forgotten, or a staged one is aborted. A
/// `stage` is a put that waits for the account change it reports
/// (``StagedChange``): it is not delivered until a `commit` line, or until
/// recovery at start finds the change in the account's file. Journals of the
/// version before staging hold only `put` and `done` lines.
enum OutboxJournalRecord: Equatable {
    /// The delivery's state from this line on.
    case put(WebhookDelivery)
    /// The delivery, waiting for `change` to be written.
    case stage(WebhookDelivery, StagedChange)
    /// The staged delivery with this id may be delivered: its change was written.
    case commit(String)
    /// The delivery with this id is gone.
    case done(String)

    /// The line for a put of `delivery`, newline included.
    static func encodePut(_ delivery: WebhookDelivery) throws(StoreError) -> [UInt8] {
        var bytes = Array("{\"put\":".utf8)
        bytes += try delivery.encoded()
        bytes += Array("}\n".utf8)
        return bytes
    }

    /// The line staging `delivery` for `change`, newline included, and the put line it stands for once committed.
    static func encodeStage(_ delivery: WebhookDelivery, _ change: StagedChange) throws(StoreError) -> (stage: [UInt8], put: [UInt8]) {
        let put = try encodePut(delivery)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let changeBytes: Data
        do { changeBytes = try encoder.encode(change) } catch { throw .unavailable("encode staged webhook change: \(type(of: error))") }
        // `{"stage":<change>,` then the put line without its opening brace.
        return (Array("{\"stage\":".utf8) + Array(changeBytes) + [UInt8(ascii: ",")] + put.dropFirst(), put)
    }

    /// The line committing staged delivery `id`, newline included.
    static func encodeCommit(id: String) -> [UInt8] {
        // Ids are `evt_<hex>.<digits>`: nothing in them needs escaping.
        Array("{\"commit\":\"\(id)\"}\n".utf8)
    }

    /// The line for the end of delivery `id`, newline included.
    static func encodeDone(id: String) -> [UInt8] {
        // Ids are `evt_<hex>.<digits>`: nothing in them needs escaping.
        Array("{\"done\":\"\(id)\"}\n".utf8)
    }

    /// The JSON shape of a line: a put (staged or not), a commit or a done.
    private struct Line: Decodable {
        var put: WebhookDelivery?
        var stage: StagedChange?
        var commit: String?
        var done: String?
    }

    /// The record on one line (without its newline), or nil when the line is not a well-formed record.
    static func decode(_ line: ArraySlice<UInt8>) -> OutboxJournalRecord? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        guard let parsed = try? decoder.decode(Line.self, from: Data(line)) else { return nil }
        switch (parsed.put, parsed.stage, parsed.commit, parsed.done) {
        case (let delivery?, nil, nil, nil) where isDeliveryID(delivery.id): return .put(delivery)
        case (let delivery?, let change?, nil, nil) where isDeliveryID(delivery.id) && change.isWellFormed:
            return .stage(delivery, change)
        case (nil, nil, let id?, nil) where isDeliveryID(id): return .commit(id)
        case (nil, nil, nil, let id?) where isDeliveryID(id): return .done(id)
        default: return nil
        }
    }

    /// Whether `id` has the shape of a delivery id: ``WebhookDelivery/isWellFormedID(_:)``.
    static func isDeliveryID(_ id: String) -> Bool {
        WebhookDelivery.isWellFormedID(id)
    }
}

/// The account change a staged delivery waits for: which account, and what its record holds before and after the change.
///
/// Hashes are lowercase hex SHA-256 of the record's bytes as stored (a journal or
/// snapshot line; a whole file in the former layout); a missing record is `"none"`.
struct StagedChange: Codable, Equatable, Sendable {
    /// The account's id.
    var account: String
    /// The record after the change: a hash, or `"none"` when the change removes it.
    var after: String
    /// The record before the change: a hash, or `"none"` when there was none.
    var before: String

    /// What a missing record is recorded as.
    static let none = "none"

    /// The recorded form of a record's bytes (nil: no record).
    static func fingerprint(_ bytes: [UInt8]?) -> String {
        bytes.map { Hex.encode(SHA256.hash($0)) } ?? none
    }

    /// Whether the fields have their shapes: an id, and each fingerprint 64 lowercase hex digits or `"none"`.
    var isWellFormed: Bool {
        func valid(_ print: String) -> Bool {
            print == Self.none
                || (print.utf8.count == 64 && print.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
        }
        return !account.isEmpty && valid(after) && valid(before) && after != before
    }

    /// Whether the account's record now (nil: none) shows that the change was written.
    ///
    /// The record as it was before means the write never happened; the record as
    /// the change left it means it did; anything else means a later write of
    /// the same account replaced it, and writes of one account are made one
    /// after another, each once the one before had returned (the staged write
    /// was then done, its commit line lost with the power).
    func isWritten(in record: [UInt8]?) -> Bool {
        Self.fingerprint(record) != before
    }
}
