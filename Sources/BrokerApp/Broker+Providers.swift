import BrokerCore

extension Broker {
    /// Says what start-up found worth warning about: no API key set. What is configured is summed up in the
    /// `listening` line (``startupSummary(_:registry:)``); presets left unconfigured are no news (most of the
    /// catalogue is unconfigured on any one broker) and get no line at all: `token-broker config check` lists them.
    static func logStartupNotes(_ c: BrokerConfiguration, registry: ProviderRegistry, logger: BrokerLogger) {
        if c.callerKeys.isEmpty {
            logger.log(
                .warning,
                "neither BROKER_API_KEY nor BROKER_API_KEYS is set: /accounts, POST /authorize and API-key access to /account answer 401")
        }
    }

    /// The start-up summary's fields: the configured providers by name, how many presets are left unconfigured, and
    /// the API keys by name (never the keys).
    static func startupSummary(_ c: BrokerConfiguration, registry: ProviderRegistry) -> [(String, LogValue)] {
        let configured = registry.all.filter(\.isConfigured).map(\.name)
        return [
            ("providers", .string(configured.joined(separator: ","))),
            ("providers_unconfigured", .int(registry.all.count - configured.count)),
            ("api_keys", .string(c.callerKeys.map(\.name).joined(separator: ","))),
        ]
    }

    /// Reads every configured OpenID provider's discovery document in the background, each retried with
    /// backoff until it loads; the broker is ready meanwhile, and those providers' sign-ins answer 503.
    func startDiscovery() {
        startMCPDiscovery()
        guard !discovery.registry.discovery.providers.isEmpty else { return }
        let logger = self.logger
        let task = Task { [discovery] in
            await discovery.keepLoading { provider, state in
                switch state {
                case .loaded(let metadata):
                    logger.log(.info, "oidc discovery loaded", [("provider", .string(provider)), ("issuer", .string(metadata.issuer))])
                case .failed(let reason):
                    logger.log(.warning, "oidc discovery failed", [("provider", .string(provider)), ("reason", .string(reason))])
                case .pending:
                    break
                }
            }
        }
        discoveryTask.withLock { $0 = task }
    }

    /// Discovers every configured remote MCP server's authorization server and registers the broker there, in the
    /// background, each retried with backoff until it loads; the broker is ready meanwhile, and those providers'
    /// sign-ins answer 503 with the reason.
    func startMCPDiscovery() {
        guard !mcpDiscovery.registry.mcp.providers.isEmpty else { return }
        let logger = self.logger
        let task = Task { [mcpDiscovery] in
            await mcpDiscovery.keepLoading { provider, state in
                switch state {
                case .loaded(let authorization):
                    logger.log(
                        .info, "mcp discovery loaded",
                        [
                            ("provider", .string(provider)), ("issuer", .string(authorization.metadata.issuer)),
                            ("client", .string(authorization.clientSource.rawValue)),
                        ])
                case .failed(let reason):
                    logger.log(.warning, "mcp discovery failed", [("provider", .string(provider)), ("reason", .string(reason))])
                case .pending:
                    break
                }
            }
        }
        mcpDiscoveryTask.withLock { $0 = task }
    }
}
