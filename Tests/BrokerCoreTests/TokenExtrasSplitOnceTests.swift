import Foundation
import Testing

@testable import BrokerCore

/// ``TokenExtras/split(_:tokensAt:)`` writes the kept fields once; what it keeps and drops is what the version that
/// wrote them twice kept and dropped (that version is ``previousSplit(_:tokensAt:)`` below).
struct TokenExtrasSplitOnceTests {
    /// The split of the previous version: the whole written to be measured, then the rest written again.
    static func previousSplit(_ answer: [String: Any], tokensAt: String?) -> (idToken: String?, extras: String?, dropped: Bool) {
        var kept = answer.filter { !TokenExtras.interpreted.contains($0.key) && $0.key != tokensAt }
        guard !kept.isEmpty else { return (nil, nil, false) }
        guard let whole = TokenExtras.serialize(kept), whole.utf8.count <= TokenExtras.maximumBytes else { return (nil, nil, true) }
        var idToken: String?
        if let raw = kept.removeValue(forKey: "id_token") {
            if let text = raw as? String, !text.isEmpty, !text.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value > 0x7E }) {
                idToken = text
            }
        }
        return (idToken, kept.isEmpty ? nil : TokenExtras.serialize(kept), false)
    }

    /// The answer in `json`, parsed as the validator parses it.
    static func answer(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    /// A string field sized so that the whole kept object is `total` bytes with an ID token of `token` (or none).
    static func sized(total: Int, token: String?) throws -> [String: Any] {
        var fields: [String: Any] = ["access_token": "at", "scope": ""]
        if let token { fields["id_token"] = token }
        let base = try #require(TokenExtras.serialize(fields.filter { $0.key != "access_token" })).utf8.count
        fields["scope"] = String(repeating: "s", count: total - base)
        return fields
    }

    static let answers: [String] = [
        #"{"access_token":"at","token_type":"bearer"}"#,
        #"{"access_token":"at","uid":"123","remind_in":"157679999","scope":"email"}"#,
        #"{"access_token":"at","id_token":"eyJ.eyJ.sig"}"#,
        #"{"access_token":"at","id_token":"eyJ.\"q\\b/.sig","scope":"a/b","nested":{"z":[1,2.5,true,null],"a":"\u00e9\n"}}"#,
        #"{"access_token":"at","id_token":"has space","scope":"x"}"#,
        #"{"access_token":"at","id_token":42,"scope":"x"}"#,
        #"{"access_token":"at","id_token":"","scope":"x"}"#,
        #"{"access_token":"at","id_token":{"a":"b"}}"#,
        #"{"authed_user":{"access_token":"at"},"team":{"id":"T1"},"id_token":"a.b.c"}"#,
    ]

    @Test(arguments: answers) func keepsWhatThePreviousVersionKept(_ json: String) throws {
        let answer = try Self.answer(json)
        for tokensAt in [nil, "authed_user"] {
            let now = TokenExtras.split(answer, tokensAt: tokensAt)
            let before = Self.previousSplit(answer, tokensAt: tokensAt)
            #expect(now.idToken == before.idToken && now.extras == before.extras && now.dropped == before.dropped)
        }
    }

    /// At the cap the fields are kept, one byte over it none are, with an ID token (escapes included) or without.
    @Test(arguments: [nil, "eyJ.eyJ.sig", #"eyJ."q\.sig"#, "not safe"]) func theCapFallsWhereItFell(_ token: String?) throws {
        for total in [TokenExtras.maximumBytes - 1, TokenExtras.maximumBytes, TokenExtras.maximumBytes + 1] {
            let answer = try Self.sized(total: total, token: token)
            let now = TokenExtras.split(answer, tokensAt: nil)
            let before = Self.previousSplit(answer, tokensAt: nil)
            #expect(before.dropped == (total > TokenExtras.maximumBytes))
            #expect(now.idToken == before.idToken && now.extras == before.extras && now.dropped == before.dropped)
        }
    }
}
