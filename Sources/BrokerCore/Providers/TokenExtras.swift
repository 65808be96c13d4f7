import Foundation

/// The fields of a token answer the broker does not interpret itself, kept with the account for its clients.
///
/// `GET /account` returns them under `raw`: OpenID Connect's `id_token`,
/// Salesforce's `instance_url`, the granted `scope` as sent, and whatever else
/// a provider puts at the top level of its answer. Left out are the members the
/// broker reads (`access_token`, `refresh_token`, `token_type`, `expires_in`,
/// `refresh_token_expires_in`), the provider's error fields, and the object the
/// tokens were read from when it is not the top level (Slack's `authed_user`,
/// which holds a token). `id_token` is kept apart as a secret; the others are
/// one JSON object's text, keys sorted.
public enum TokenExtras {
    /// The most bytes all kept fields may take as one JSON object, `id_token` included; past it, none are kept.
    public static let maximumBytes = 16_384

    /// Top-level members never kept: read by the broker, or error fields (RFC 6749 §5.2, Weibo's `error_code`).
    static let interpreted: Set<String> = [
        "access_token", "refresh_token", "token_type", "expires_in", "refresh_token_expires_in",
        "error", "error_description", "error_uri", "error_code",
    ]

    /// Members a refresh answer often omits though they still hold; kept from the previous answer when it does.
    ///
    /// OpenID Connect Core §12.2: a refresh answer may leave out the ID token;
    /// Salesforce sends `instance_url` with every answer, but proxies and other
    /// providers trim it on refresh, and the instance does not move with a refresh.
    public static let keptAcrossRefresh = ["id_token", "instance_url"]

    /// The kept fields of `answer`: `id_token` apart, the rest as text; `dropped` when they were over ``maximumBytes``.
    ///
    /// `tokensAt` is the top-level member the tokens were read from, when not the top level.
    static func split(_ answer: [String: Any], tokensAt: String?) -> (idToken: String?, extras: String?, dropped: Bool) {
        var kept = answer.filter { !interpreted.contains($0.key) && $0.key != tokensAt }
        guard !kept.isEmpty else { return (nil, nil, false) }
        guard let raw = kept.removeValue(forKey: "id_token") else {
            // Nothing kept apart: the text of the whole is the text kept, written once.
            guard let whole = serialize(kept), whole.utf8.count <= maximumBytes else { return (nil, nil, true) }
            return (nil, whole, false)
        }
        // A header-safe string or nothing: an ID token is a JWS compact serialization (RFC 7515 §7.1).
        guard let text = raw as? String, !text.isEmpty, !text.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value > 0x7E })
        else {
            // Not kept, yet it counts toward the cap: the whole is written to be measured (rare; never for a real token).
            var whole = kept
            whole["id_token"] = raw
            guard let text = serialize(whole), text.utf8.count <= maximumBytes else { return (nil, nil, true) }
            return (nil, kept.isEmpty ? nil : serialize(kept), false)
        }
        let rest = kept.isEmpty ? nil : serialize(kept)
        if !kept.isEmpty && rest == nil { return (nil, nil, true) }
        // The whole object's size without writing it: `"id_token":"…"` (13 bytes around the token, one more for each
        // `"` or `\` it holds, escaped) inside braces, or beside the other members after a comma.
        let escapes = text.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "\"") || $1 == UInt8(ascii: "\\") ? 1 : 0) }
        let member = 13 + text.utf8.count + escapes
        let whole = rest.map { $0.utf8.count + 1 + member } ?? member + 2
        guard whole <= maximumBytes else { return (nil, nil, true) }
        return (text, rest, false)
    }

    /// The fields kept after a refresh: the new answer's, plus ``keptAcrossRefresh`` and `also` members of the old ones it omits.
    ///
    /// `old` and `new` are JSON object texts as ``split(_:tokensAt:)`` makes them; `id_token` is handled by the caller.
    /// `also` names what the provider's ``ResourceLookup``s keep, which no refresh answer carries.
    static func merged(old: String?, new: String?, also: [String] = []) -> String? {
        guard let old, let previous = object(old) else { return new }
        var fields = new.flatMap(object) ?? [:]
        for name in keptAcrossRefresh + also where fields[name] == nil {
            if let value = previous[name] { fields[name] = value }
        }
        guard !fields.isEmpty, let text = serialize(fields), text.utf8.count <= maximumBytes else { return new }
        return text
    }

    /// The JSON object in `text`, or nil.
    static func object(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    /// `fields` as compact JSON with sorted keys; nil when it cannot be written (it always can, being parsed JSON).
    static func serialize(_ fields: [String: Any]) -> String? {
        guard JSONSerialization.isValidJSONObject(fields),
            let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
