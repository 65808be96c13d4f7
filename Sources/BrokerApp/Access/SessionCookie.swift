import BrokerCore
import BrokerCrypto
import BrokerHTTP

/// The browser's session: which accounts this browser connected, signed with `BROKER_SECRET`.
///
/// Value: `base64url(payload) "." base64url(HMAC-SHA256(secret, payload))`, payload
/// `v1|issuedAt|id1,id2,…` (account ids are `provider:uid`, percent-encoded for `,|`).
/// A cookie whose MAC does not verify is ignored as if absent.
struct SessionCookie: Equatable {
    /// The cookie's name.
    static let name = "tb_session"
    /// At most this many accounts are remembered per browser (the cookie must stay under 4 KiB).
    static let maxAccounts = 20

    /// Account ids this browser may read and delete.
    var accountIDs: [String]
    /// Unix seconds when the cookie was last written.
    var issuedAt: Int

    /// Whether this browser connected account `id`, compared as exact bytes: a canonically
    /// equivalent spelling of another user's id is another account.
    func holds(_ id: String) -> Bool {
        accountIDs.contains { ExactKey.same($0, id) }
    }

    /// Adds an id (most recent last), dropping the oldest past the cap.
    mutating func insert(_ id: String) {
        accountIDs.removeAll { ExactKey.same($0, id) }
        accountIDs.append(id)
        if accountIDs.count > Self.maxAccounts { accountIDs.removeFirst(accountIDs.count - Self.maxAccounts) }
    }

    /// Signs and encodes the cookie value.
    func encode(secret: [UInt8]) -> String {
        let ids = accountIDs.map { PercentEncoding.rfc3986($0) }.joined(separator: ",")
        let payload = Array("v1|\(issuedAt)|\(ids)".utf8)
        let mac = HMAC.sha256(key: secret, message: payload)
        return Base64URL.encode(payload) + "." + Base64URL.encode(mac)
    }

    /// Verifies and decodes a cookie value; nil when tampered, truncated or malformed.
    static func decode(_ value: String, secret: [UInt8]) -> SessionCookie? {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(String(parts[0])),
            let mac = Base64URL.decode(String(parts[1])),
            ConstantTime.equals(mac, HMAC.sha256(key: secret, message: payload))
        else { return nil }
        let fields = String(decoding: payload, as: UTF8.self).split(separator: "|", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0] == "v1", let issuedAt = Int(fields[1]) else { return nil }
        let ids = fields[2].split(separator: ",").map { PercentEncoding.formDecodeLeniently($0.utf8) }
        return SessionCookie(accountIDs: ids, issuedAt: issuedAt)
    }
}
