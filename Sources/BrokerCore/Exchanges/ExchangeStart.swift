/// What an exchange's begin step hands back: where the browser goes, and what the pending flow must keep until the callback.
struct ExchangeStart: Sendable {
    /// The provider URL to send the browser to.
    var authorizeURL: String
    /// The PKCE verifier (RFC 7636 §4.1), when the flow uses PKCE.
    var codeVerifier: Secret?
    /// The OAuth 1.0a temporary token or the TMDB request token the callback must name.
    var requestToken: String?
    /// The OAuth 1.0a temporary token's secret, which signs the token credentials request (RFC 5849 §2.3).
    var requestTokenSecret: Secret?
    /// The OpenID Connect `nonce` sent with the authorization request (OIDC Core §3.1.2.1), compared with the ID token's.
    var nonce: Secret?
    /// The longest the flow may live, in seconds, when the provider's own token dies sooner than the broker's flow TTL.
    var maximumLifetime: Double?

    /// Creates a start; only `authorizeURL` is needed by every kind.
    init(
        authorizeURL: String, codeVerifier: Secret? = nil, requestToken: String? = nil,
        requestTokenSecret: Secret? = nil, maximumLifetime: Double? = nil
    ) {
        self.authorizeURL = authorizeURL
        self.codeVerifier = codeVerifier
        self.requestToken = requestToken
        self.requestTokenSecret = requestTokenSecret
        self.maximumLifetime = maximumLifetime
    }
}
