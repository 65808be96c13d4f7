/// Which protocol a provider speaks, and so which exchange completes its flows.
public enum ProviderKind: String, Sendable, CaseIterable {
    /// OAuth 2.0 authorization code grant (RFC 6749 §4.1).
    case oauth2
    /// OpenID Connect on the authorization code flow (OIDC Core §3.1): OAuth 2.0 whose endpoints come from the
    /// issuer's discovery document and whose user is the ID token's `sub`.
    case oidc
    /// OAuth 1.0a three-legged flow (RFC 5849).
    case oauth1
    /// TMDB API v3 session authentication (request token → approval → session id).
    case tmdb
}
