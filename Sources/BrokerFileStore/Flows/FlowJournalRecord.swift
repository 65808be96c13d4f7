import BrokerCore
import Foundation

/// One line of the flow journal: a flow that became pending, a state that stopped being pending, or how a flow ended.
///
/// Lines are compact JSON objects ending in a newline, so the journal stays
/// human-readable and each record goes to disk in one `write`:
///
///     {"put":{"binding":"…","code_verifier":"sealed:v1:…","state":"…",…,"version":1}}
///     {"take":"<state>"}
///     {"outcome":{"account":"…","ended_at":"…","keep_until":"…","state":"…","status":"completed",…,"version":1}}
///
/// A `take` line is written when a flow is taken (used, or found expired) or purged.
/// An `outcome` line (absent from journals of earlier versions) replaces the
/// outcome of its state; it holds no secret.
enum FlowJournalRecord: Equatable {
    /// A pending flow in its stored shape (secrets sealed when the store has a key).
    case put(PendingFlowJSON)
    /// The flow with this state is no longer pending.
    case take(String)
    /// How the flow with this state stands or ended.
    case outcome(FlowOutcomeJSON)

    /// The JSON shape of a line: exactly one of the fields is present.
    private struct Line: Codable {
        var put: PendingFlowJSON?
        var take: String?
        var outcome: FlowOutcomeJSON?
    }

    /// The line for a put of `record`, newline included.
    static func encodePut(_ record: PendingFlowJSON) throws(StoreError) -> [UInt8] {
        try encode(Line(put: record, take: nil, outcome: nil))
    }

    /// The line for an outcome `record`, newline included.
    static func encodeOutcome(_ record: FlowOutcomeJSON) throws(StoreError) -> [UInt8] {
        try encode(Line(put: nil, take: nil, outcome: record))
    }

    /// `line` as compact JSON with sorted keys and a newline.
    private static func encode(_ line: Line) throws(StoreError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            var bytes = [UInt8](try encoder.encode(line))
            bytes.append(0x0A)
            return bytes
        } catch {
            throw .unavailable("encode flow record: \(type(of: error))")
        }
    }

    /// The line for a take of `state`, newline included; `state` must already be a valid flow state (base64url).
    static func encodeTake(state: String) -> [UInt8] {
        // A valid state holds only [A-Za-z0-9_-]: nothing in it needs escaping.
        Array("{\"take\":\"\(state)\"}\n".utf8)
    }

    /// The record on one line (without its newline), or nil when the line is not a well-formed record.
    static func decode(_ line: ArraySlice<UInt8>) -> FlowJournalRecord? {
        guard let parsed = try? JSONDecoder().decode(Line.self, from: Data(line)) else { return nil }
        switch (parsed.put, parsed.take, parsed.outcome) {
        case (let record?, nil, nil) where StoreFileName.forFlow(state: record.state) != nil:
            return .put(record)
        case (nil, let state?, nil) where StoreFileName.forFlow(state: state) != nil:
            return .take(state)
        case (nil, nil, let record?) where StoreFileName.forFlow(state: record.state) != nil:
            return .outcome(record)
        default:
            return nil
        }
    }
}
