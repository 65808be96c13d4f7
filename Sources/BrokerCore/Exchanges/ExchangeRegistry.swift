/// The one place that maps a ``ProviderKind`` to its exchange and its settings; a new kind is a folder under `Exchanges/` and a case in each switch here.
enum ExchangeRegistry {
    /// How an account is revoked at its provider.
    typealias Revocation = @Sendable (Account) async throws(BrokerError) -> Void

    /// The exchange that speaks `provider`'s kind, built from the kind's settings.
    ///
    /// Throws ``BrokerError/providerNotConfigured(_:missing:)`` naming every
    /// setting the kind needs and `provider` lacks.
    static func exchange(for provider: ProviderConfiguration, in context: ExchangeContext) throws(BrokerError) -> any ProviderExchange {
        let scoped = context.scoped(to: provider.name)
        return switch provider.kind {
        case .oauth2: OAuth2Exchange(settings: try OAuth2Settings(provider), context: scoped)
        case .oidc: OIDCExchange(settings: try OIDCSettings(provider), context: scoped)
        case .oauth1: OAuth1Exchange(settings: try OAuth1Settings(provider), context: scoped)
        case .tmdb: TMDBSessionExchange(settings: try TMDBSettings(provider), context: scoped)
        case .mcp: MCPExchange(settings: try MCPSettings(provider), context: scoped)
        case .apiKey, .basic, .bearer:
            throw BrokerError.providerUnavailable(
                provider.name, reason: "its credentials are entered with POST /accounts; it has no sign-in")
        }
    }

    /// How to revoke `provider`'s accounts, needing only what revocation needs: nil when the provider has no revocation.
    ///
    /// An account can outlive its provider's settings. An OAuth 2.0 endpoint that
    /// takes no client credentials still revokes then; one that does, and a TMDB
    /// logout, throws ``BrokerError/providerNotConfigured(_:missing:)``.
    static func revocation(for provider: ProviderConfiguration, in context: ExchangeContext) throws(BrokerError) -> Revocation? {
        let context = context.scoped(to: provider.name)
        switch provider.kind {
        case .oauth2:
            guard let revocation = try OAuth2Revocation.of(provider) else { return nil }
            let call = context.call
            return { account throws(BrokerError) in try await revocation.revoke(account, through: call) }
        case .oidc:
            return try OIDCExchange.revocation(for: provider, in: context)
        case .oauth1:
            return nil
        case .mcp:
            // The discovered revocation endpoint, as the exchange has it; while discovery is pending, the reason.
            let exchange = MCPExchange(settings: try MCPSettings(provider), context: context)
            return { account throws(BrokerError) in try await exchange.revoke(account) }
        case .tmdb:
            return TMDBSessionExchange(settings: try TMDBSettings(provider), context: context).revoke
        case .apiKey, .basic, .bearer:
            // An entered credential is the provider's to revoke (its dashboard); deleting forgets it here.
            return nil
        }
    }

    /// The providers-file keys of the settings `provider`'s kind needs and `provider` lacks, in the kind's fixed order.
    static func missingKeys(in provider: ProviderConfiguration) -> [String] {
        switch provider.kind {
        case .oauth2: OAuth2Settings.missingKeys(in: provider)
        case .oidc: OIDCSettings.missingKeys(in: provider)
        case .oauth1: OAuth1Settings.missingKeys(in: provider)
        case .tmdb: TMDBSettings.missingKeys(in: provider)
        case .mcp: MCPSettings.missingKeys(in: provider)
        case .apiKey, .basic, .bearer: []
        }
    }
}
