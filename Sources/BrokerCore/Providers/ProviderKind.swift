/// Which protocol a provider speaks, and so which exchange completes its flows.
public enum ProviderKind: String, Sendable, CaseIterable {
    /// OAuth 2.0 authorization code grant (RFC 6749 §4.1).
    case oauth2
    /// OAuth 1.0a three-legged flow (RFC 5849).
    case oauth1
    /// TMDB API v3 session authentication (request token → approval → session id).
    case tmdb
}
