import BrokerCrypto
import BrokerHTTP

/// A one-time message for the connect page ("Connected …"), carried by a short-lived signed cookie across a 303.
///
/// Value: `base64url(kind "|" account id) "." base64url(HMAC-SHA256(secret, "notice|" payload))`.
/// The page shows it once and clears the cookie.
struct ConnectPageNotice: Equatable {
    /// The cookie's name.
    static let cookieName = "tb_notice"
    /// Seconds the cookie lives: long enough for the redirect, short enough to never surprise later.
    static let maxAge = 60

    /// What happened.
    enum Kind: String, Equatable {
        /// An account was connected.
        case connected
        /// An account was disconnected and revoked (or the provider has no revocation).
        case disconnected
        /// An account was deleted here but the provider did not confirm the revocation.
        case disconnectedUnrevoked = "disconnected-unrevoked"
    }

    /// What happened.
    var kind: Kind
    /// The account it happened to, `provider:uid`.
    var accountID: String

    /// The signed cookie value.
    func encode(secret: [UInt8]) -> String {
        let payload = Array((kind.rawValue + "|" + accountID).utf8)
        return Base64URL.encode(payload) + "." + Base64URL.encode(Self.mac(payload, secret: secret))
    }

    /// The notice in a cookie value, or nil when it is malformed or its MAC does not verify.
    static func decode(_ value: String, secret: [UInt8]) -> ConnectPageNotice? {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(String(parts[0])), let mac = Base64URL.decode(String(parts[1])),
            ConstantTime.equals(mac, Self.mac(payload, secret: secret))
        else { return nil }
        let text = String(decoding: payload, as: UTF8.self)
        guard let bar = text.firstIndex(of: "|"), let kind = Kind(rawValue: String(text[..<bar])) else { return nil }
        return ConnectPageNotice(kind: kind, accountID: String(text[text.index(after: bar)...]))
    }

    /// The `Set-Cookie` value that carries this notice to the next page.
    func setCookie(secret: [UInt8], cookies: CookieHeader) -> String {
        cookies.set(Self.cookieName, encode(secret: secret), path: "/", maxAge: Self.maxAge)
    }

    private static func mac(_ payload: [UInt8], secret: [UInt8]) -> [UInt8] {
        HMAC.sha256(key: secret, message: Array("notice|".utf8) + payload)
    }
}
