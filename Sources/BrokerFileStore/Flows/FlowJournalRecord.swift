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
    struct Line: Codable {
        var put: PendingFlowJSON?
        var take: String?
        var outcome: FlowOutcomeJSON?
    }

    /// The line for a put of `record`, newline included.
    ///
    /// Written byte by byte as the `JSONEncoder` of earlier versions wrote it (sorted keys, slashes unescaped,
    /// absent fields left out; `tags` in the byte order of their names), with none of the encoder's cost on every sign-in.
    static func encodePut(_ record: PendingFlowJSON) -> [UInt8] {
        var json = JSONBytes(capacity: 512)
        json.open()
        json.key("put")
        json.open()
        json.string("binding", record.binding)
        json.string("code_verifier", record.codeVerifier)
        if let connect = record.connect {
            json.key("connect")
            json.open()
            json.string("account", connect.account)
            json.string("origin", connect.origin)
            json.array("providers", connect.providers)
            json.array("scopes", connect.scopes)
            json.string("stage", connect.stage)
            json.close()
        }
        json.string("created_at", record.createdAt)
        if let device = record.device {
            json.key("device")
            json.open()
            json.string("device_code", device.deviceCode)
            json.integer("interval", device.interval)
            json.string("next_poll_at", device.nextPollAt)
            json.close()
        }
        json.string("end_user_email", record.endUserEmail)
        json.string("end_user_id", record.endUserID)
        json.string("end_user_name", record.endUserName)
        json.string("expires_at", record.expiresAt)
        json.string("nonce", record.nonce)
        json.string("provider", record.provider)
        json.string("request_token", record.requestToken)
        json.string("request_token_secret", record.requestTokenSecret)
        json.string("return_to", record.returnTo)
        json.array("scopes", record.scopes)
        json.strings("settings", record.settings)
        json.string("state", record.state)
        json.string("step_up", record.stepUp)
        json.strings("tags", record.tags)
        json.integer("version", record.version)
        json.close()
        json.close()
        json.newline()
        return json.bytes
    }

    /// The line for an outcome `record`, newline included, written as ``encodePut(_:)`` writes a put.
    static func encodeOutcome(_ record: FlowOutcomeJSON) -> [UInt8] {
        var json = JSONBytes(capacity: 320)
        json.open()
        json.key("outcome")
        json.open()
        json.string("account", record.account)
        json.string("end_user_id", record.endUserID)
        json.string("ended_at", record.endedAt)
        json.string("error", record.error)
        json.string("expires_at", record.expiresAt)
        json.string("keep_until", record.keepUntil)
        json.string("provider", record.provider)
        json.string("state", record.state)
        json.string("status", record.status)
        json.strings("tags", record.tags)
        json.integer("version", record.version)
        json.close()
        json.close()
        json.newline()
        return json.bytes
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
