/// What a TMDB provider must and may have, checked once: the API key, the API root and the approval page are never absent here.
///
/// Built from a ``ProviderConfiguration`` by ``init(_:)``, which refuses a
/// provider missing any of `api_key`, `api_base_url` and `authorize_url`, so
/// the exchange and its client read no optionals at call time.
public struct TMDBSettings: ProviderKindSettings, Sendable {
    /// The API key: a v3 key, or an API Read Access Token.
    public let apiKey: Secret
    /// The API root, for example `https://api.themoviedb.org/3`.
    public let apiBaseURL: String
    /// The approval page root.
    public let authorizeURL: String
    /// An approval page root preferred to ``authorizeURL`` when set.
    public let authenticateURL: String?

    /// Reads `provider` through `required`, the one statement of what TMDB requires.
    package init(_ provider: ProviderConfiguration, reading required: inout RequiredSettings) {
        apiKey = required.secret("api_key", provider.apiKey)
        apiBaseURL = required.text("api_base_url", provider.apiBaseURL)
        authorizeURL = required.text("authorize_url", provider.authorizeURL)
        authenticateURL = provider.authenticateURL
    }
}
