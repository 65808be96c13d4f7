/// What an OAuth 1.0a provider must and may have, checked once: the consumer credentials and the three endpoints are never absent here.
///
/// Built from a ``ProviderConfiguration`` by ``init(_:)``, which refuses a
/// provider missing any of `client_id` (the consumer key), `client_secret`
/// (the consumer secret), `request_token_url`, `authorize_url` and
/// `access_token_url` (RFC 5849 §2), so the exchange and its client read no
/// optionals at call time.
public struct OAuth1Settings: ProviderKindSettings, Sendable {
    /// The consumer key.
    public let consumerKey: String
    /// The consumer secret.
    public let consumerSecret: Secret
    /// The temporary-credentials endpoint (RFC 5849 §2.1).
    public let requestTokenURL: String
    /// The resource owner authorization endpoint (RFC 5849 §2.2).
    public let authorizeURL: String
    /// The "Sign in with" endpoint (Twitter `oauth/authenticate`), preferred to ``authorizeURL`` when set.
    public let authenticateURL: String?
    /// The token-credentials endpoint (RFC 5849 §2.3).
    public let accessTokenURL: String
    /// The endpoint that names the user; nil when the provider has none.
    public let userURL: String?
    /// The top-level field of the user response that holds the stable user id; `id` unless configured.
    public let userIDField: String

    /// Reads `provider` through `required`, the one statement of what OAuth 1.0a requires.
    package init(_ provider: ProviderConfiguration, reading required: inout RequiredSettings) {
        consumerKey = required.text("client_id", provider.clientID)
        consumerSecret = required.secret("client_secret", provider.clientSecret)
        requestTokenURL = required.text("request_token_url", provider.requestTokenURL)
        authorizeURL = required.text("authorize_url", provider.authorizeURL)
        accessTokenURL = required.text("access_token_url", provider.accessTokenURL)
        authenticateURL = provider.authenticateURL
        userURL = provider.userURL
        userIDField = provider.userIDFields.first ?? "id"
    }
}
