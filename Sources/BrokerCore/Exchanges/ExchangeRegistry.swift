/// The one place that maps a ``ProviderKind`` to its exchange; a new kind is a folder under `Exchanges/` and one line here.
enum ExchangeRegistry {
    /// The exchange that speaks `provider`'s kind, for `provider`.
    static func exchange(for provider: ProviderConfiguration, in context: ExchangeContext) -> any ProviderExchange {
        switch provider.kind {
        case .oauth2: OAuth2Exchange(provider: provider, context: context)
        case .oauth1: OAuth1Exchange(provider: provider, context: context)
        case .tmdb: TMDBSessionExchange(provider: provider, context: context)
        }
    }

    /// The providers-file keys of the settings `provider`'s kind needs and `provider` lacks, in the kind's fixed order.
    static func missingKeys(in provider: ProviderConfiguration) -> [String] {
        switch provider.kind {
        case .oauth2: OAuth2Settings.missingKeys(in: provider)
        case .oauth1: OAuth1Settings.missingKeys(in: provider)
        case .tmdb: TMDBSettings.missingKeys(in: provider)
        }
    }
}
