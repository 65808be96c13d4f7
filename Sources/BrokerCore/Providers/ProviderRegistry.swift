/// Every provider the broker knows: the presets, plus and merged with the providers file.
public struct ProviderRegistry: Sendable {
    /// Keyed by the name's exact bytes, so a look-alike spelling never finds a provider.
    private let providers: [ExactKey: ProviderConfiguration]
    /// The discovery documents of the configured OpenID Connect providers, shared by every copy of this registry.
    public let discovery: OIDCDiscoveryCache
    /// What discovery found for each configured remote MCP server, shared by every copy of this registry.
    public let mcp: DiscoveryCache<MCPAuthorization>

    /// Builds the registry from an explicit list, for tests and embedders; a later duplicate name wins.
    public init(providers: [ProviderConfiguration]) {
        var table: [ExactKey: ProviderConfiguration] = [:]
        for provider in providers { table[ExactKey(provider.name)] = provider }
        self.providers = table
        discovery = OIDCDiscoveryCache(providers: table.values.filter { $0.kind == .oidc && $0.isConfigured }.map(\.name))
        mcp = DiscoveryCache(providers: table.values.filter { $0.kind == .mcp && $0.isConfigured }.map(\.name))
    }

    /// Presets (``ProviderPresets``) with credentials from `environment`, then the providers file over them.
    ///
    /// Credentials: `WEIBO_CLIENT_ID`/`WEIBO_CLIENT_SECRET`, `SLACK_…` and so on
    /// for every OAuth 2.0 preset, `TWITTER_CONSUMER_KEY`/`TWITTER_CONSUMER_SECRET`,
    /// `TMDB_API_KEY`. A preset without them stays listed but unconfigured. An
    /// endpoint variable (`MICROSOFT_TENANT`, `GITLAB_URL`, `SALESFORCE_LOGIN_HOST`)
    /// that cannot stand in a URL throws an error naming it. `providersFile` is
    /// the file's bytes, or nil when there is none; a malformed file or an
    /// incomplete provider in it throws an error naming the provider and key.
    public static func load(environment: [String: String], providersFile: [UInt8]?) throws(ProviderConfigurationError) -> ProviderRegistry {
        try ProviderPresets.checkVariables(in: environment)
        var list = ProviderPresets.names.compactMap { ProviderPresets.preset(named: $0, environment: environment) }
        if let providersFile {
            let fromFile = try ProvidersFile.configurations(from: providersFile, environment: environment)
            list.append(contentsOf: fromFile)
        }
        return ProviderRegistry(providers: list)
    }

    /// The provider called `named`, or nil.
    public func provider(named: String) -> ProviderConfiguration? {
        providers[ExactKey(named)]
    }

    /// Whether a provider is configured under exactly `named`, without copying its configuration out (the proxy asks
    /// on every call, for its metrics).
    public func knows(_ named: String) -> Bool {
        providers.index(forKey: ExactKey(named)) != nil
    }

    /// Every provider, sorted by name.
    public var all: [ProviderConfiguration] {
        providers.values.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }
}
