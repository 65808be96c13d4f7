import BrokerCore
import BrokerHTTP
import Foundation

/// JSON renderings of an account: the full one with its token for `/account`, and a
/// summary without secrets for lists and callback pages.
///
/// `status` is what ``AccountService/reportedStatus(of:)`` says: `active`,
/// `expired`, `reauthorization_required`, `refresh_exhausted` or `invalid`. Written straight to bytes: `/account` is
/// the hottest path after `/healthz`.
enum AccountJSON {
    /// `{"id","provider","uid","access_token",…,"raw"}`; never the refresh token.
    ///
    /// For an account of an `api_key`, `basic` or `bearer` provider (`entered`), `access_token` is the credential's
    /// one value (null when it has several, as `basic` does) and `credentials` holds every field by name.
    static func fullBytes(_ account: Account, status: String, entered: Bool = false) -> [UInt8] {
        guard entered, let values = CredentialValues(stored: account.accessToken) else {
            return write(account, status: status, secrets: true)
        }
        var shown = account
        shown.accessToken = Secret(values.fields.count == 1 ? values.fields[0].value.value : "")
        var bytes = write(shown, status: status, secrets: true, singleValue: values.fields.count == 1)
        // The fields go last, before the closing brace: `,"credentials":{…}}`.
        bytes.removeLast()
        bytes += Array(#","credentials":"#.utf8)
        bytes.append(UInt8(ascii: "{"))
        for (index, field) in values.fields.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONString.appendQuoted(field.name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            JSONString.appendQuoted(field.value.value, to: &bytes)
        }
        bytes += Array("}}".utf8)
        return bytes
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

    private static func write(_ a: Account, status: String, secrets: Bool, singleValue: Bool = true) -> [UInt8] {
        // Built on the stack (most answers fit) and copied out once, into the answer's array.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 640) { stack in
            var out = ByteWriter(startingIn: stack)
            write(a, status: status, secrets: secrets, singleValue: singleValue, to: &out)
            return out.bytes
        }
    }

    private static func write(_ a: Account, status: String, secrets: Bool, singleValue: Bool, to out: inout ByteWriter) {
        // In the parts a cached rendering keeps (``Parts``): what holds no secret is written by `head`, `middle` and
        // `tail`, so a rendering from parts and one from scratch are the same bytes by construction.
        head(a, &out)
        if secrets { token(a, singleValue: singleValue, &out) }
        middle(a, &out)
        string(status, &out)
        tail(a, &out)
        if secrets { rawMember(a, &out) }
        out.append(UInt8(ascii: "}"))
    }

    /// `{"id":…,"provider":…,"uid":…`: no secret.
    private static func head(_ a: Account, _ out: inout ByteWriter) {
        // Each name with the comma before it is one literal, so a field costs two copies: its name's and its value's.
        // The id is `provider:uid`, escaped part by part (escaping is per character, and `:` needs none) rather than
        // built as a string first.
        out.append(#"{"id":""#)
        JSONString.appendEscaped(a.provider, to: &out)
        out.append(UInt8(ascii: ":"))
        JSONString.appendEscaped(a.uid, to: &out)
        out.append(#"","provider":"#)
        string(a.provider, &out)
        out.append(#","uid":"#)
        string(a.uid, &out)
    }

    /// `,"access_token":…[,"token_secret":…]`: the secrets that follow the head.
    private static func token(_ a: Account, singleValue: Bool, _ out: inout ByteWriter) {
        token(a.accessToken, a.tokenSecret, singleValue: singleValue, &out)
    }

    /// ``token(_:singleValue:_:)`` of an account with these secrets.
    private static func token(_ accessToken: Secret, _ tokenSecret: Secret?, singleValue: Bool, _ out: inout ByteWriter) {
        out.append(#","access_token":"#)
        string(singleValue ? accessToken.value : nil, &out)
        if let secret = tokenSecret {
            out.append(#","token_secret":"#)
            string(secret.value, &out)
        }
    }

    /// `,"token_type":…` to `,"status":`, the status's value left to the caller: no secret.
    private static func middle(_ a: Account, _ out: inout ByteWriter) {
        out.append(#","token_type":"#)
        string(a.tokenType, &out)
        out.append(#","scope":"#)
        string(a.scope, &out)
        // The granted scopes as a list (RFC 6749 §5.1, split at spaces and commas); null when unknown.
        out.append(#","scopes":"#)
        strings(a.grantedScopes, &out)
        out.append(#","expires_at":"#)
        date(a.expiresAt, &out)
        out.append(#","created_at":"#)
        date(a.createdAt, &out)
        out.append(#","updated_at":"#)
        date(a.updatedAt, &out)
        out.append(#","refreshed_at":"#)
        date(a.refreshedAt, &out)
        out.append(#","status":"#)
    }

    /// From `,"screen_name":…` to the metadata, before `raw`: no secret.
    private static func tail(_ a: Account, _ out: inout ByteWriter) {
        if let name = a.screenName {
            out.append(#","screen_name":"#)
            string(name, &out)
        }
        out.append(#","end_user_id":"#)
        string(a.endUser?.id, &out)
        out.append(#","end_user_email":"#)
        string(a.endUser?.email, &out)
        out.append(#","end_user_name":"#)
        string(a.endUser?.name, &out)
        out.append(#","tags":"#)
        tags(a.tags, &out)
        if !a.settings.isEmpty {
            out.append(#","settings":"#)
            tags(a.settings, &out)
        }
        if let metadata = a.metadata {
            Self.metadata(metadata, &out)
        }
    }

    /// `,"raw":{…}` when the account has an ID token or extras.
    private static func rawMember(_ a: Account, _ out: inout ByteWriter) {
        rawMember(idToken: a.idToken, extras: a.extras, &out)
    }

    /// ``rawMember(_:_:)`` of an account with this ID token and these extras.
    private static func rawMember(idToken: Secret?, extras: String?, _ out: inout ByteWriter) {
        if idToken != nil || extras != nil {
            out.append(#","raw":"#)
            raw(idToken: idToken, extras: extras, &out)
        }
    }

    /// The parts of an account's full rendering that hold no secret (no token, no ID token, no extras), kept by
    /// ``AccountRenderCache`` so that a read renders only the secrets and the status.
    struct Parts: Sendable {
        /// `{"id":…` to the `uid`'s value.
        let head: [UInt8]
        /// `,"token_type":…` to `,"status":`.
        let middle: [UInt8]
        /// `,"screen_name":…` (when present) to the metadata.
        let tail: [UInt8]
    }

    /// The parts of `a`'s rendering that hold no secret.
    static func parts(_ a: Account) -> Parts {
        func bytes(_ part: (Account, inout ByteWriter) -> Void) -> [UInt8] {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { stack in
                var out = ByteWriter(startingIn: stack)
                part(a, &out)
                return out.bytes
            }
        }
        return Parts(head: bytes(head), middle: bytes(middle), tail: bytes(tail))
    }

    /// ``fullBytes(_:status:entered:)`` for an account without entered credentials, its parts without secrets
    /// taken from `parts` (which ``parts(_:)`` made from this account): the same bytes.
    static func fullBytes(_ a: Account, status: String, parts: Parts) -> [UInt8] {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 640) { stack in
            var out = ByteWriter(startingIn: stack)
            out.append(parts.head)
            token(a, singleValue: true, &out)
            out.append(parts.middle)
            string(status, &out)
            out.append(parts.tail)
            rawMember(a, &out)
            out.append(UInt8(ascii: "}"))
            return out.bytes
        }
    }

    /// ``fullBytes(_:status:parts:)`` of an account as the store holds it: its secrets read from `held`, the rest
    /// from `parts` (made from the same account), the status given as its JSON string literal (`"active"` with its
    /// quotes: copied, not scanned for escapes on every read). The same bytes.
    static func fullBytes(_ held: HeldAccount, quotedStatus: StaticString, parts: Parts) -> [UInt8] {
        parts.head.withUnsafeBufferPointer { head in
            parts.middle.withUnsafeBufferPointer { middle in
                parts.tail.withUnsafeBufferPointer { tail in
                    fullBytes(held, quotedStatus: quotedStatus, head: head, middle: middle, tail: tail)
                }
            }
        }
    }

    /// ``fullBytes(_:quotedStatus:parts:)`` with the parts given as their bytes (an ``AccountRenderCache/Entry``'s).
    static func fullBytes(
        _ held: HeldAccount, quotedStatus: StaticString, head: UnsafeBufferPointer<UInt8>, middle: UnsafeBufferPointer<UInt8>,
        tail: UnsafeBufferPointer<UInt8>
    ) -> [UInt8] {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 640) { stack in
            var out = ByteWriter(startingIn: stack)
            out.append(head)
            token(held.accessToken, held.tokenSecret, singleValue: true, &out)
            out.append(middle)
            out.append(quotedStatus)
            out.append(tail)
            rawMember(idToken: held.idToken, extras: held.extras, &out)
            out.append(UInt8(ascii: "}"))
            return out.bytes
        }
    }

    /// A JSON array of strings, or `null`.
    private static func strings(_ values: [String]?, _ out: inout ByteWriter) {
        guard let values else { return out.append("null") }
        out.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONString.appendQuoted(value, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// A JSON string, or `null`.
    private static func string(_ value: String?, _ out: inout ByteWriter) {
        guard let value else { return out.append("null") }
        JSONString.appendQuoted(value, to: &out)
    }

    /// The token answer's other fields as one object: `id_token` first, then the kept extras (already a JSON object's text).
    private static func raw(idToken: Secret?, extras: String?, _ out: inout ByteWriter) {
        // The broker wrote the text as one compact object; anything else in a record is left out, not echoed.
        var extras = extras ?? ""
        extras.withUTF8 { text in
            var inner = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
            if text.first == UInt8(ascii: "{"), text.last == UInt8(ascii: "}") {
                inner = UnsafeBufferPointer(rebasing: text.dropFirst().dropLast())
            }
            while let first = inner.first, isSpace(first) { inner = UnsafeBufferPointer(rebasing: inner.dropFirst()) }
            out.append(UInt8(ascii: "{"))
            if let idToken {
                out.append(#""id_token":"#)
                JSONString.appendQuoted(idToken.value, to: &out)
                if !inner.isEmpty { out.append(UInt8(ascii: ",")) }
            }
            out.append(inner)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// `,"metadata":{…}`: the stored compact object as it was written; text that is not one object is left out, not echoed.
    private static func metadata(_ text: String, _ out: inout ByteWriter) {
        var text = text
        text.withUTF8 { bytes in
            guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else { return }
            out.append(#","metadata":"#)
            out.append(bytes)
        }
    }

    /// The tags as one JSON object, keys sorted, `{}` when there are none.
    static func tags(_ tags: [String: String]) -> String {
        var out = ByteWriter(capacity: 64)
        Self.tags(tags, &out)
        return String(decoding: out.bytes, as: UTF8.self)
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
