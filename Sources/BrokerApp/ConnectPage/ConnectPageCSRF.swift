import BrokerCrypto

/// The anti-forgery token of the connect page's forms: an HMAC of this browser's session cookie.
///
/// A site that makes the browser post to `/disconnect` cannot read the page, so it
/// cannot know the token; the token changes whenever the session cookie does.
/// (OWASP CSRF Prevention Cheat Sheet, "Signed Double-Submit Cookie".)
struct ConnectPageCSRF {
    /// The key that signs session cookies; the token's MAC is domain-separated from theirs by a prefix.
    let secret: [UInt8]

    /// The token for the session cookie value `session`.
    func token(session: String) -> String {
        Base64URL.encode(HMAC.sha256(key: secret, message: Array(("token-broker csrf v1|" + session).utf8)))
    }

    /// Whether `token` is the one for `session`, compared in constant time; false when either is missing.
    func verify(_ token: String?, session: String?) -> Bool {
        guard let token, let session, !token.isEmpty, !session.isEmpty else { return false }
        return ConstantTime.equals(token, self.token(session: session))
    }
}
