import BrokerCore
import BrokerHTTP
import Foundation

/// JSON renderings of an account: the full one with its token for `/account`, and a
/// summary without secrets for lists and callback pages.
///
/// `status` is what ``AccountService/reportedStatus(of:)`` says: `active`,
/// `expired` or `reauthorization_required`. Written straight to bytes: `/account` is
/// the hottest path after `/healthz`.
enum AccountJSON {
    /// `{"id","provider","uid","access_token",…,"raw"}`; never the refresh token.
    static func fullBytes(_ account: Account, status: String) -> [UInt8] {
        write(account, status: status, secrets: true)
    }

    /// `{"id","provider","uid",…}` without any secret.
    static func summaryBytes(_ account: Account, status: String) -> [UInt8] {
        write(account, status: status, secrets: false)
    }

    /// The full rendering as text.
    static func full(_ account: Account, status: String) -> String {
        String(decoding: fullBytes(account, status: status), as: UTF8.self)
    }

    /// The summary as text.
    static func summary(_ account: Account, status: String) -> String {
        String(decoding: summaryBytes(account, status: status), as: UTF8.self)
    }

    private static func write(_ a: Account, status: String, secrets: Bool) -> [UInt8] {
        var json = JSONObjectWriter()
        json.string("id", a.id)
        json.string("provider", a.provider)
        json.string("uid", a.uid)
        if secrets {
            json.string("access_token", a.accessToken.value)
            if let secret = a.tokenSecret { json.string("token_secret", secret.value) }
        }
        json.string("token_type", a.tokenType)
        json.string("scope", a.scope)
        json.value("expires_at") { date(a.expiresAt, &$0) }
        json.value("created_at") { date(a.createdAt, &$0) }
        json.value("updated_at") { date(a.updatedAt, &$0) }
        json.value("refreshed_at") { date(a.refreshedAt, &$0) }
        json.string("status", status)
        if let name = a.screenName { json.string("screen_name", name) }
        json.string("end_user_id", a.endUser?.id)
        json.string("end_user_email", a.endUser?.email)
        json.string("end_user_name", a.endUser?.name)
        json.value("tags") { tags(a.tags, &$0) }
        if secrets, a.idToken != nil || a.extras != nil { json.value("raw") { raw(a, &$0) } }
        return json.finish()
    }

    /// The token answer's other fields as one object: `id_token` first, then the kept extras (already a JSON object's text).
    private static func raw(_ a: Account, _ out: inout ByteWriter) {
        // The broker wrote the text as one compact object; anything else in a record is left out, not echoed.
        var extras = a.extras ?? ""
        extras.withUTF8 { text in
            var inner = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
            if text.first == UInt8(ascii: "{"), text.last == UInt8(ascii: "}") {
                inner = UnsafeBufferPointer(rebasing: text.dropFirst().dropLast())
            }
            while let first = inner.first, isSpace(first) { inner = UnsafeBufferPointer(rebasing: inner.dropFirst()) }
            out.append(UInt8(ascii: "{"))
            if let idToken = a.idToken {
                out.append(#""id_token":"#)
                JSONString.appendQuoted(idToken.value, to: &out)
                if !inner.isEmpty { out.append(UInt8(ascii: ",")) }
            }
            out.append(inner)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// The tags as one object, keys sorted, `{}` when there are none.
    private static func tags(_ tags: [String: String], _ out: inout ByteWriter) {
        out.append(UInt8(ascii: "{"))
        for (index, key) in tags.keys.sorted(by: ExactKey.precedes).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONString.appendQuoted(key, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONString.appendQuoted(tags[key] ?? "", to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// JSON whitespace (RFC 8259 §2).
    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    static func date(_ d: Date?) -> String {
        var bytes = ByteWriter(capacity: RFC3339Date.maximumCount + 2)
        date(d, &bytes)
        return String(decoding: bytes.bytes, as: UTF8.self)
    }

    private static func date(_ d: Date?, _ out: inout ByteWriter) {
        guard let d else { return out.append("null") }
        out.write(atMost: RFC3339Date.maximumCount + 2) { p in
            p[0] = 0x22
            let count = RFC3339Date.write(d, to: p + 1)
            p[count + 1] = 0x22
            return count + 2
        }
    }
}
