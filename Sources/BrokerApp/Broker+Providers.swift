import BrokerCore

extension Broker {
    /// Says what start-up found worth telling: no API key set, providers of the catalogue left unconfigured.
    static func logStartupNotes(_ c: BrokerConfiguration, registry: ProviderRegistry, logger: BrokerLogger) {
        if c.callerKeys.isEmpty {
            logger.log(
                .warning,
                "neither BROKER_API_KEY nor BROKER_API_KEYS is set: /accounts, POST /authorize and API-key access to /account answer 401")
        }
        // One line for all: most of the catalogue's presets are unconfigured on any one broker, and that is no news.
        let unconfigured = registry.all.filter { !$0.isConfigured }.map(\.name)
        if !unconfigured.isEmpty {
            logger.log(
                .info, "providers not configured",
                [
                    ("count", .int(unconfigured.count)),
                    ("providers", .string(unconfigured.joined(separator: ","))),
                ])
        }
    }

    /// Reads every configured OpenID provider's discovery document in the background, each retried with
    /// backoff until it loads; the broker is ready meanwhile, and those providers' sign-ins answer 503.
    func startDiscovery() {
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
}
