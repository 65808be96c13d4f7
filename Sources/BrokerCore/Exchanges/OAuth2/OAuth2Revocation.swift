/// An OAuth 2.0 provider's revocation endpoint and how to call it (RFC 7009 §2.1).
///
/// Kept apart from the rest of ``OAuth2Settings`` because revocation is the one
/// call an account may need after its provider lost its settings.
public struct OAuth2Revocation: Sendable {
    /// The revocation endpoint.
    public let url: String
    /// The form parameter carrying the token to revoke: `token` (RFC 7009 §2.1) or Weibo's `access_token`.
    public let tokenParameter: String
    /// The client credentials sent along; nil when the endpoint takes none.
    public let credentials: OAuth2Settings.Credentials?
}
