/// What a TMDB provider must and may have, checked once: the API key, the API root and the approval page are never absent here.
///
/// Built from a ``ProviderConfiguration`` by ``init(_:)``, which refuses a
/// provider missing any of `api_key`, `api_base_url` and `authorize_url`, so
/// the exchange and its client read no optionals at call time.
public struct TMDBSettings: Sendable {
    /// The API key: a v3 key, or an API Read Access Token.
    public let apiKey: Secret
    /// The API root, for example `https://api.themoviedb.org/3`.
    public let apiBaseURL: String
    /// The approval page root.
    public let authorizeURL: String
    /// An approval page root preferred to ``authorizeURL`` when set.
    public let authenticateURL: String?

    /// The settings of `provider`; throws ``BrokerError/providerNotConfigured(_:missing:)`` naming every missing required setting.
    public init(_ provider: ProviderConfiguration) throws(BrokerError) {
        var required = RequiredSettings(provider)
        self.init(provider, reading: &required)
        try required.check()
    }

    /// The providers-file keys of the settings `provider` lacks to be a TMDB provider, in a fixed order.
    static func missingKeys(in provider: ProviderConfiguration) -> [String] {
        var required = RequiredSettings(provider)
        _ = Self(provider, reading: &required)
        return required.missingKeys
    }

    /// Reads `provider` through `required`, the one statement of what TMDB requires.
    private init(_ provider: ProviderConfiguration, reading required: inout RequiredSettings) {
        apiKey = required.secret("api_key", provider.apiKey)
        apiBaseURL = required.text("api_base_url", provider.apiBaseURL)
        authorizeURL = required.text("authorize_url", provider.authorizeURL)
        authenticateURL = provider.authenticateURL
    }
}
