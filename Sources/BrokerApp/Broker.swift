import BrokerCore
import BrokerHTTP
import BrokerPostgres
import Foundation
import Synchronization

/// The whole service: configuration, storage, routes and the HTTP server, wired together.
public final class Broker: Sendable {
    /// The configuration it runs with.
    public let configuration: BrokerConfiguration
    /// Where its log lines go.
    public let logger: BrokerLogger
    /// Ready or not, and why.
    public let readiness: Readiness
    let server: HTTPServer
    /// The listener that serves only `/metrics` (`BROKER_METRICS_ADDR`); nil when `/metrics` is on the main port.
    let metricsServer: HTTPServer?
    /// Where everything is kept: the data directory's files or Redis (``StorageBackendFactory``).
    let storage: any StorageBackend
    let purgeTask = Mutex<Task<Void, Never>?>(nil)
    /// Renews due accounts in the background (off when `BROKER_REFRESH_INTERVAL` is 0).
    let backgroundRefresher: BackgroundRefresher
    /// Polls pending device sign-ins, this replica's and every other's (off when `BROKER_DEVICE_POLL_TICK` is 0).
    let devicePoller: DeviceFlowPoller
    /// Verifies entered credentials on a schedule, one replica at a time (off when `BROKER_VERIFY_INTERVAL` is 0).
    let credentialSweep: CredentialVerificationSweep
    /// The webhook outbox, sink and dispatcher; nil when `BROKER_WEBHOOK_URL` is unset.
    let webhooks: Webhooks?
    /// Reads the OpenID providers' discovery documents, retrying in the background until each loads.
    let discovery: OIDCDiscovery
    /// The task that runs ``discovery`` from ``start()`` until ``shutdown()``.
    let discoveryTask = Mutex<Task<Void, Never>?>(nil)
    /// Discovers the remote MCP servers and registers the broker there, retrying in the background until each loads.
    let mcpDiscovery: MCPDiscovery
    /// The task that runs ``mcpDiscovery`` from ``start()`` until ``shutdown()``.
    let mcpDiscoveryTask = Mutex<Task<Void, Never>?>(nil)
    /// Records token hand-outs, deletions and finished flows (and writes `BROKER_AUDIT_LOG`).
    let audit: AuditTrail

    /// Builds a broker on the file store: prepares the data directory, stores, providers and routes. Nothing listens yet.
    ///
    /// A broker on Redis is built with ``make(configuration:logger:upstream:clients:now:)``,
    /// which first settles its key and secret with the other replicas.
    public convenience init(
        configuration c: BrokerConfiguration, logger: BrokerLogger,
        upstream: (any UpstreamClient)? = nil, clients: UpstreamClientFactory = .native,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        try self.init(configuration: c, logger: logger, upstream: upstream, clients: clients, now: now, settlement: nil)
    }

    /// Builds the broker; on Redis, first settles the encryption key and cookie secret with the other replicas.
    ///
    /// A replica whose key or secret differs from what the others recorded
    /// stops with ``ConfigurationError`` (exit code 2) naming the variable;
    /// while Redis cannot be reached this waits, up to 30 seconds. Provider calls go through `upstream` when given,
    /// else through a client `clients` makes; webhook deliveries through another client `clients` makes.
    public static func make(
        configuration c: BrokerConfiguration, logger: BrokerLogger,
        upstream: (any UpstreamClient)? = nil, clients: UpstreamClientFactory = .native,
        now: @escaping @Sendable () -> Date = { Date() }
    ) async throws -> Broker {
        let settlement = try await StorageBackendFactory.settlement(c, logger: logger)
        let postgres = try await StorageBackendFactory.openPostgres(c, logger: logger, now: now)
        return try Broker(
            configuration: c, logger: logger, upstream: upstream, clients: clients, now: now, settlement: settlement, postgres: postgres)
    }

    /// Builds the broker; `settlement` carries what a Redis-backed broker agreed with the other replicas.
    init(
        configuration c: BrokerConfiguration, logger: BrokerLogger, upstream: (any UpstreamClient)?,
        clients: UpstreamClientFactory = .native, now: @escaping @Sendable () -> Date, settlement: ReplicaSettlement?,
        postgres: PostgresOpening? = nil
    ) throws {
        configuration = c
        self.logger = logger
        try StorageBackendFactory.prepareDataDirectory(c)
        let registry = ProviderRegistry(providers: c.providers)
        _ = ProcessMetrics.startTime  // taken now, at start-up, rather than at the first scrape
        let opened = try StorageBackendFactory.open(c, logger: logger, now: now, settlement: settlement, postgres: postgres)
        let storage = opened.backend
        self.storage = storage
        // Every outbound call that fails is counted by cause; provider calls also log it (deliveries log their attempts).
        let upstreamErrors = UpstreamErrorMetrics()
        // The outbox lives in the store the accounts live in, so a change and its event are written together.
        webhooks = c.webhooks.flatMap { settings in
            storage.outbox.map {
                Webhooks(
                    settings: settings, outbox: $0, logger: logger, now: now, clients: clients, caFile: c.upstreamCAFile,
                    errors: upstreamErrors)
            }
        }
        let providerClient = MeteredUpstreamClient(
            inner: upstream
                ?? clients.make(timeout: c.upstreamTimeout, maxResponseBytes: c.upstreamMaxBytes, caFile: c.upstreamCAFile),
            errors: upstreamErrors, target: .provider, logger: logger)
        let services = BrokerServices(
            c, registry: registry, storage: storage, storageMetrics: opened.metrics, upstreamErrors: upstreamErrors,
            events: webhooks?.sink, upstream: providerClient, logger: logger, now: now)
        discovery = services.discovery
        mcpDiscovery = services.mcpDiscovery
        backgroundRefresher = services.refresher
        devicePoller = services.devicePoller
        credentialSweep = CredentialVerificationSweep(
            accounts: services.accounts, registry: registry,
            verifier: CredentialVerifier(client: EpollUpstreamClient.sharedClient(caFile: c.upstreamCAFile), timeout: c.verifyTimeout),
            lock: storage.refreshLock, interval: c.verifyInterval, logger: logger)
        audit = try Self.openAudit(c, metrics: services.metrics, logger: logger)
        // Token reads go on while the audit file cannot be written (its events wait in memory), but the broker
        // says it is not ready, so that traffic moves to a replica that can record it.
        readiness = Readiness(
            storageCheck: { [auditFile = audit.file] in
                if let problem = await storage.unavailability() { return problem }
                return auditFile?.health.failure == nil ? nil : "audit_log_not_writable"
            }, degradation: { storage.degradation() }
        ) { [logger] problem in
            if let problem {
                logger.log(.warning, "not ready", [("reason", .string(problem))])
            } else {
                logger.log(.info, "ready")
            }
        }
        (server, metricsServer) = Self.servers(
            c, services: services, readiness: readiness, webhooks: webhooks, backup: storage.backup,
            cookieSecret: opened.cookieSecret, audit: audit, logger: logger, now: now)
        Self.logStartupNotes(c, registry: registry, logger: logger)
    }

    /// `token-broker rekey`: re-encrypts every account not sealed with the current key; returns (rewritten, total).
    public static func rekey(configuration c: BrokerConfiguration, logger: BrokerLogger) async throws -> (
        rewritten: Int, total: Int, keyID: String
    ) {
        try await StorageBackendFactory.rekey(configuration: c, logger: logger)
    }

    /// Starts listening; the bound port is `port` afterwards.
    public func start() throws {
        try server.start()
        do {
            try metricsServer?.start()
        } catch {
            Task { [server] in await server.shutdown(grace: 0) }
            throw StartupError(message: "cannot listen for /metrics on \(configuration.metricsAddress.map { "\($0)" } ?? ""): \(error)")
        }
        let flows = storage.flows
        let logger = self.logger
        // Expired pending flows are removed, and outcomes past their keep-until forgotten, once a minute, or once per
        // BROKER_FLOW_TTL when that is shorter, so neither stays in memory more than a TTL (or a minute) past its expiry.
        // take() refuses an expired flow anyway.
        let purgeEvery = UInt64(min(60, max(1, configuration.flowTTL)) * 1e9)
        let task = Task {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: purgeEvery)
                if let purged = try? await flows.purgeExpired(now: Date()), purged > 0 {
                    logger.log(.info, "expired flows purged", [("count", .int(purged))])
                }
            }
        }
        purgeTask.withLock { $0 = task }
        startDiscovery()
        storage.start()
        backgroundRefresher.start()
        devicePoller.start()
        credentialSweep.start()
        webhooks?.dispatcher.start()
        for unknown in configuration.unknownVariables {
            var fields: [(String, LogValue)] = [("variable", .string(unknown.name))]
            if let closest = unknown.closest { fields.append(("did_you_mean", .string(closest))) }
            logger.log(.warning, "unknown variable ignored", fields)
        }
        logger.log(
            .info, "listening",
            [
                ("host", .string(configuration.server.host)), ("port", .int(server.port)),
                ("data_dir", .string(configuration.dataDirectory)), ("public_url", .string(configuration.publicURL)),
                ("store", .string(configuration.storeDescription)),
                ("refresh_margin_s", .double(configuration.refreshMargin, decimals: 1)),
                ("refresh_interval_s", .double(configuration.refreshInterval, decimals: 1)),
                ("refresh_concurrency", .int(configuration.refreshConcurrency)),
                ("webhook_urls", .int(configuration.webhooks?.urls.count ?? 0)),
            ] + Self.startupSummary(configuration, registry: discovery.registry)
                + (metricsServer.map { [("metrics_port", .int($0.port))] } ?? []))
    }

    /// The bound port.
    public var port: Int { server.port }

    /// The bound port of the `/metrics` listener, or nil when `/metrics` is served on ``port``.
    public var metricsPort: Int? { metricsServer?.port }

    /// Graceful stop: readiness turns 503, the listener closes, in-flight requests finish,
    /// idle connections close; returns within the configured grace period.
    public func shutdown() async {
        readiness.beginShutdown()
        purgeTask.withLock { $0?.cancel() }
        discoveryTask.withLock { $0?.cancel() }
        mcpDiscoveryTask.withLock { $0?.cancel() }
        backgroundRefresher.stop()
        devicePoller.stop()
        credentialSweep.stop()
        logger.log(
            .info, "shutting down",
            [
                ("grace_s", .double(configuration.shutdownGrace, decimals: 1)),
                ("open_connections", .int(server.openConnections)),
            ])
        await server.shutdown(grace: configuration.shutdownGrace)
        // Scrapes go on while the main port drains, so the drain itself can be watched.
        await metricsServer?.shutdown(grace: 1)
        // Deliveries cut off here stay pending and go out after the next start.
        await webhooks?.dispatcher.stop()
        audit.file?.close()
        // Last: the cache's connection closes, and the data directory's lock is given up.
        storage.stop()
        logger.log(.info, "stopped")
        logger.flush()
    }
}

/// Start-up failed for a reason other than a bad setting (exit code 1).
public struct StartupError: Error, CustomStringConvertible {
    /// What went wrong.
    public let message: String
    public var description: String { message }
}
