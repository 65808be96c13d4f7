import BrokerCore
import Foundation

/// The core services of one broker, built on its storage back end: sign-ins, accounts and their refresh, app
/// tokens, OpenID discovery, and the metrics they report into.
struct BrokerServices: Sendable {
    /// The providers.
    let registry: ProviderRegistry
    /// Counters and gauges for `/metrics`.
    let metrics: BrokerMetrics
    /// Reads the OpenID providers' discovery documents.
    let discovery: OIDCDiscovery
    /// Discovers the remote MCP servers' authorization servers and registers the broker there.
    let mcpDiscovery: MCPDiscovery
    /// Starts and completes sign-ins.
    let authorization: AuthorizationService
    /// Reads, refreshes and deletes accounts.
    let accounts: AccountService
    /// Fetches and caches app tokens.
    let appTokens: AppTokenService
    /// Renews due accounts in the background.
    let refresher: BackgroundRefresher
    /// Polls pending device sign-ins (off when `BROKER_DEVICE_POLL_TICK` is 0).
    let devicePoller: DeviceFlowPoller

    /// Builds the services of `c` on `storage`; account and sign-in events go to `events`.
    init(
        _ c: BrokerConfiguration, registry: ProviderRegistry, storage: any StorageBackend, storageMetrics: StorageMetrics,
        upstreamErrors: UpstreamErrorMetrics, events: (any EventSink)?, upstream: any UpstreamClient, logger: BrokerLogger,
        now: @escaping @Sendable () -> Date
    ) {
        self.registry = registry
        let metrics = BrokerMetrics(
            providers: registry.all.filter(\.offersSignIn).map(\.name),
            appTokenProviders: registry.all.filter { $0.isConfigured && $0.grants.contains(.clientCredentials) }.map(\.name),
            storage: storageMetrics, upstreamErrors: upstreamErrors)
        self.metrics = metrics
        discovery = OIDCDiscovery(registry: registry, upstream: upstream, providerCalls: metrics.providerCalls)
        authorization = AuthorizationService(
            registry: registry, accounts: storage.accounts, flows: storage.flows, outcomes: storage.flowOutcomes,
            upstream: upstream, publicURL: c.publicURL, flowTTL: c.flowTTL, returnToAllowlist: c.returnToAllowlist, now: now,
            providerCalls: metrics.providerCalls,
            onFlow: { event in
                metrics.flows.record(event)
                if case .extrasDropped(let provider) = event {
                    logger.log(
                        .warning, "token answer's extra fields dropped: over \(TokenExtras.maximumBytes) bytes",
                        [("provider", .string(provider))])
                }
            }, events: events)
        let publicURL = String(authorization.redirectURI.dropLast("/callback".count))
        mcpDiscovery = MCPDiscovery(
            registry: registry, upstream: upstream, registrations: storage.clientRegistrations, lock: storage.refreshLock,
            redirectURI: authorization.redirectURI,
            clientMetadataURL: { provider in ClientMetadataDocument.url(publicURL: publicURL, provider: provider) },
            providerCalls: metrics.providerCalls, now: now)
        // The lock outlives one provider call (BROKER_UPSTREAM_TIMEOUT) plus the store round trips around it.
        let refreshPolicy = RefreshCoordinator.Policy(
            margin: c.refreshMargin, lockTTL: c.upstreamTimeout + 10, giveUp: c.refreshGiveUp)
        accounts = AccountService(
            accounts: storage.accounts, registry: registry, upstream: upstream,
            redirectURI: authorization.redirectURI, now: now,
            refreshPolicy: refreshPolicy, refreshLock: storage.refreshLock,
            refreshBackoff: storage.refreshBackoff,
            providerCalls: metrics.providerCalls,
            onRefresh: { event in
                metrics.refresh.record(event)
                Broker.log(event, to: logger)
            },
            events: events)
        // App tokens take the accounts' lock and backoff, so replicas single-flight them the same way.
        appTokens = AppTokenService(
            registry: registry, upstream: upstream, store: storage.appTokens,
            lock: storage.refreshLock, backoffStore: storage.refreshBackoff, policy: refreshPolicy, now: now,
            providerCalls: metrics.providerCalls,
            onEvent: { event in
                metrics.appTokens.record(event)
                Broker.log(event, to: logger)
            })
        devicePoller = DeviceFlowPoller(
            service: authorization, lock: storage.refreshLock, lockTTL: refreshPolicy.lockTTL, tick: c.devicePollTick)
        refresher = BackgroundRefresher(
            service: accounts, interval: c.refreshInterval, herd: BackgroundRefresher.Herd(concurrency: c.refreshConcurrency),
            onSweepFailure: { error in
                var fields: [(String, LogValue)] = [("error", .string(error.code)), ("reason", .string(error.message))]
                if let detail = error.logDetail { fields.append(("cause", .string(detail))) }
                logger.log(.warning, "background refresh sweep failed", fields)
            })
    }
}
