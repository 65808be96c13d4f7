/// The provider call an upstream error came from, named in error messages and logs.
///
/// The raw value is what ``BrokerError/upstreamError(step:reason:)`` and
/// ``BrokerError/upstreamTimeout(step:)`` carry, so messages read the same
/// whichever exchange made the call.
public enum ProviderStep: String, Sendable, CaseIterable {
    /// OAuth 2.0 code for tokens (RFC 6749 §4.1.3).
    case tokenExchange = "token_exchange"
    /// The provider's user endpoint, naming the account.
    case userInfo = "user_info"
    /// OAuth 2.0 refresh grant (RFC 6749 §6).
    case tokenRefresh = "token_refresh"
    /// OAuth 2.0 client credentials grant for an app token (RFC 6749 §4.4).
    case clientCredentials = "client_credentials_grant"
    /// Revocation at the provider: RFC 7009, Weibo's `revokeoauth2`, or TMDB's session logout.
    case revoke
    /// OAuth 1.0a temporary credentials (RFC 5849 §2.1), or TMDB's request token.
    case requestToken = "request_token"
    /// OAuth 1.0a token credentials (RFC 5849 §2.3).
    case accessToken = "access_token"
    /// TMDB's session creation from an approved request token.
    case session
    /// TMDB's account lookup for a session.
    case account
    /// A document fetched with a new account's access token and kept with it (``ResourceLookup``, Atlassian's accessible resources).
    case resourceLookup = "resource_lookup"
    /// The device authorization request of a device sign-in (RFC 8628 §3.1).
    case deviceAuthorization = "device_authorization"
    /// OpenID Connect Discovery: the issuer's `/.well-known/openid-configuration` (OIDC Discovery §4).
    case discovery
    /// Registering the broker as a client of a remote MCP server's authorization server (RFC 7591 §3).
    case registration = "client_registration"
}
