/// The client and token credentials an OAuth 1.0a request is signed with (RFC 5849 §1.1).
///
/// Printing a value never shows the secrets or the token: ``description``, ``debugDescription``
/// and `dump` all redact them, so credentials can travel through logs safely.
public struct OAuth1Credentials: Sendable {
    /// The client identifier, sent in clear as `oauth_consumer_key`.
    public var consumerKey: String
    /// The client shared secret; half of the HMAC-SHA1 key.
    public var consumerSecret: String
    /// The temporary or token credential identifier (`oauth_token`), or nil before one exists.
    public var token: String?
    /// The secret that goes with ``token``; the other half of the HMAC-SHA1 key.
    public var tokenSecret: String?

    /// Creates credentials; pass no token for the temporary-credential request (RFC 5849 §2.1).
    public init(consumerKey: String, consumerSecret: String, token: String? = nil, tokenSecret: String? = nil) {
        self.consumerKey = consumerKey
        self.consumerSecret = consumerSecret
        self.token = token
        self.tokenSecret = tokenSecret
    }
}
