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
    /// A remote MCP server (MCP authorization; RFC 9728, RFC 8414, RFC 7591, RFC 8707): OAuth 2.0 whose authorization
    /// server, endpoints and client registration the broker discovers from the server itself.
    case mcp
    /// A key the user copies from the provider (OpenAI, Stripe…), entered through `POST /accounts`; no sign-in.
    case apiKey = "api_key"
    /// A user name and password sent as HTTP Basic (RFC 7617), entered through `POST /accounts`; no sign-in.
    case basic
    /// A long-lived bearer token the user copies from the provider (RFC 6750 §2.1), entered through `POST /accounts`.
    case bearer

    /// Whether accounts of this kind hold entered credentials (``CredentialScheme``) rather than the result of a sign-in.
    public var holdsEnteredCredentials: Bool {
        switch self {
        case .apiKey, .basic, .bearer: true
        case .oauth2, .oidc, .oauth1, .tmdb, .mcp: false
        }
    }

    /// The kinds' names as the providers file spells them, for error messages.
    static let spelledOut = "oauth2, oidc, oauth1, tmdb, mcp, api_key, basic or bearer"
}
