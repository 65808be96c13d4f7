import BrokerCore
import BrokerCrypto
import BrokerFileStore
import BrokerHTTP
import BrokerRedis
import Dispatch
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
    let flows: any FlowStore
    let purgeTask = Mutex<Task<Void, Never>?>(nil)
    /// Renews due accounts in the background (off when `BROKER_REFRESH_INTERVAL` is 0).
    let backgroundRefresher: BackgroundRefresher
    /// The file store's data directory lock, held until shutdown (nil with Redis, or when the directory is read-only).
    let directoryLock: DataDirectoryLock?
    /// The webhook outbox, sink and dispatcher; nil when `BROKER_WEBHOOK_URL` is unset.
    let webhooks: Webhooks?
    /// The Redis stores, whose cache runs in the background; nil on the file store.
    let redisStores: RedisStores?
    /// Reads the OpenID providers' discovery documents, retrying in the background until each loads.
    let discovery: OIDCDiscovery
    /// The task that runs ``discovery`` from ``start()`` until ``shutdown()``.
    let discoveryTask = Mutex<Task<Void, Never>?>(nil)
    /// Records token hand-outs, deletions and finished flows (and writes `BROKER_AUDIT_LOG`).
    let audit: AuditTrail

    /// Builds a broker on the file store: prepares the data directory, stores, providers and routes. Nothing listens yet.
    ///
    /// A broker on Redis is built with ``make(configuration:logger:upstream:now:)``,
    /// which first settles its key and secret with the other replicas.
    public convenience init(
        configuration c: BrokerConfiguration, logger: BrokerLogger,
        upstream: (any UpstreamClient)? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        try self.init(configuration: c, logger: logger, upstream: upstream, now: now, settlement: nil)
    }

    /// Builds the broker; `settlement` carries what a Redis-backed broker agreed with the other replicas.
    init(
        configuration c: BrokerConfiguration, logger: BrokerLogger, upstream: (any UpstreamClient)?,
        now: @escaping @Sendable () -> Date, settlement: ReplicaSettlement?
    ) throws {
        configuration = c
        self.logger = logger
        let dataDirectory = c.dataDirectory
        do {
            try DataDirectory.prepare(dataDirectory)
        } catch {
            throw ConfigurationError(variable: "BROKER_DATA_DIR", message: "\(error)")
        }
        let registry = try Self.loadProviders(c)
        _ = ProcessMetrics.startTime  // taken now, at start-up, rather than at the first scrape
        // Before the store is read: a second broker on the same files would diverge from the first.
        do {
            directoryLock = c.redisStore == nil ? try DataDirectoryLock.acquire(in: dataDirectory) : nil
        } catch {
            throw StartupError(message: "\(error)")
        }
        if c.redisStore != nil, settlement == nil {
            throw StartupError(
                message: "a broker on Redis is built with Broker.make, which settles its key and secret with the other replicas")
        }
        let codec = try settlement.map { EncryptedAccountCodec(keyring: $0.keyring) } ?? Self.accountCodec(c, logger: logger)
        let accounts: any AccountRepository
        let flows: any FlowStore
        let outcomes: any FlowOutcomeStore
        let cookieSecret: [UInt8]
        let storageCheck: @Sendable () async -> String?
        var degradation: @Sendable () -> String? = { nil }
        let refreshLock: any RefreshLock
        let refreshBackoff: any RefreshBackoffStore
        var redisClient: RedisClient?
        let redisStores: RedisStores?
        let backupStore: BackupHandlers.Store
        do {
            if let settlement {
                // Shared state for several replicas: accounts, flows and refresh locks in Redis.
                let redis = RedisStores(
                    client: settlement.client, codec: codec, flowSealer: codec,
                    cacheCapacity: c.redisCacheMax, now: now)
                redisStores = redis
                accounts = redis.accountRepository
                flows = redis.flows
                outcomes = redis.flows
                storageCheck = { await redis.client.ping() ? nil : "redis_unreachable" }
                refreshLock = redis.lock
                // One backoff for all replicas: N replicas make one provider call per backoff window, not N.
                refreshBackoff = redis.backoff
                redisClient = redis.client
                backupStore = .redis
            } else {
                redisStores = nil
                let store = try JSONFileAccountRepository(
                    directory: dataDirectory, codec: codec, compactionThreshold: c.accountsCompactBytes)
                Self.reportOpening(store, logger: logger)
                degradation = { store.damagedRecordCount > 0 ? "account_records_damaged" : nil }
                accounts = store
                backupStore = .files(store)
                let journal = try JournalFlowStore(
                    directory: dataDirectory, durable: false, sealer: codec,
                    maxPending: c.maxPendingFlows, now: now())
                if journal.discardedAtOpen > 0 {
                    logger.log(
                        .warning, "pending flows cancelled at start: the flow journal was damaged or unreadable",
                        [("count", .int(journal.discardedAtOpen))])
                }
                flows = journal
                outcomes = journal
                // The probe touches the disk: keep it off the worker queues and the cooperative pool.
                storageCheck = { await DataDirectory.probeWritable(dataDirectory) ? nil : "storage_not_writable" }
                // One process owns the file store, so an in-process lock is enough for single-flight refresh.
                refreshLock = InProcessRefreshLock(now: now)
                refreshBackoff = InProcessRefreshBackoffStore(now: now)
            }
            cookieSecret =
                try settlement?.cookieSecret ?? c.secret.map { Array($0.value.utf8) }
                ?? DataDirectory.readOrCreateSecret(named: "broker-secret", in: dataDirectory) { SecureRandom.bytes(32) }
        } catch {
            throw StartupError(message: "cannot open the data directory \(dataDirectory): \(error)")
        }
        self.flows = flows
        do {
            // The outbox lives in the store the accounts live in: the data directory, or Redis.
            webhooks = try c.webhooks.map { settings throws(StoreError) in
                try Webhooks(
                    settings: settings, redis: redisClient, dataDirectory: dataDirectory, logger: logger, now: now,
                    client: c.upstreamClient)
            }
        } catch {
            throw StartupError(message: "cannot open the webhook outbox in \(dataDirectory): \(error)")
        }
        self.redisStores = redisStores
        let upstream =
            upstream
            ?? SchemeRoutingUpstreamClient.make(c.upstreamClient, timeout: c.upstreamTimeout, maxResponseBytes: c.upstreamMaxBytes)
        let metrics = BrokerMetrics(
            providers: registry.all.filter(\.offersSignIn).map(\.name),
            appTokenProviders: registry.all.filter { $0.isConfigured && $0.grants.contains(.clientCredentials) }.map(\.name),
            fileStore: accounts as? JSONFileAccountRepository)
        discovery = OIDCDiscovery(registry: registry, upstream: upstream, providerCalls: metrics.providerCalls)
        let authorization = AuthorizationService(
            registry: registry, accounts: accounts, flows: flows, outcomes: outcomes, upstream: upstream, publicURL: c.publicURL,
            flowTTL: c.flowTTL, returnToAllowlist: c.returnToAllowlist, now: now,
            providerCalls: metrics.providerCalls,
            onFlow: { event in
                metrics.flows.record(event)
                if case .extrasDropped(let provider) = event {
                    logger.log(
                        .warning, "token answer's extra fields dropped: over \(TokenExtras.maximumBytes) bytes",
                        [("provider", .string(provider))])
                }
            }, events: webhooks?.sink)
        // The lock outlives one provider call (BROKER_UPSTREAM_TIMEOUT) plus the store round trips around it.
        let refreshPolicy = RefreshCoordinator.Policy(margin: c.refreshMargin, lockTTL: c.upstreamTimeout + 10)
        let accountService = AccountService(
            accounts: accounts, registry: registry, upstream: upstream,
            redirectURI: authorization.redirectURI, now: now,
            refreshPolicy: refreshPolicy, refreshLock: refreshLock,
            refreshBackoff: refreshBackoff,
            providerCalls: metrics.providerCalls,
            onRefresh: { event in
                metrics.refresh.record(event)
                Self.log(event, to: logger)
            },
            events: webhooks?.sink)
        // App tokens take the accounts' lock and backoff, so replicas single-flight them the same way.
        let appTokens = AppTokenService(
            registry: registry, upstream: upstream, store: redisStores?.appTokens ?? InProcessAppTokenStore(now: now),
            lock: refreshLock, backoffStore: refreshBackoff, policy: refreshPolicy, now: now,
            providerCalls: metrics.providerCalls,
            onEvent: { event in
                metrics.appTokens.record(event)
                Self.log(event, to: logger)
            })
        let herd = BackgroundRefresher.Herd(concurrency: c.refreshConcurrency)
        backgroundRefresher = BackgroundRefresher(
            service: accountService, interval: c.refreshInterval, herd: herd,
            onSweepFailure: { error in
                var fields: [(String, LogValue)] = [("error", .string(error.code)), ("reason", .string(error.message))]
                if let detail = error.logDetail { fields.append(("cause", .string(detail))) }
                logger.log(.warning, "background refresh sweep failed", fields)
            })
        let access = AccessControl(apiKeys: c.callerKeys, cookieSecret: cookieSecret, sessionMaxAge: 30 * 86_400)
        let cookies = CookieHeader(publicURL: c.publicURL)
        let appearance = PageAppearance(
            title: c.pageTitle, accent: c.pageAccent.flatMap(PageAccent.init(hex:)) ?? .standard,
            basePath: cookies.basePath,
            iconURLs: registry.all.filter(\.isConfigured).compactMap(\.iconURL))
        let audit = AuditTrail(
            logger: logger, file: try c.auditLog.map { path throws(ConfigurationError) in try AuditLogFile(path: path, logger: logger) })
        self.audit = audit
        metrics.auditFile.withLock { $0 = audit.file }
        if let file = audit.file, file.cutAtOpen > 0 {
            logger.log(
                .warning, "audit log ended in a partial line (a write cut short before this start); cut it off",
                [("path", .string(c.auditLog ?? "")), ("bytes", .int(file.cutAtOpen))])
        }
        let oauth = OAuthHandlers(
            authorization: authorization, accounts: accountService, registry: registry, access: access,
            cookies: cookies, appearance: appearance, flowTTL: c.flowTTL, logger: logger, audit: audit, now: now)
        // Token reads go on while the audit file cannot be written (its events wait in memory), but the broker
        // says it is not ready, so that traffic moves to a replica that can record it.
        let readiness = Readiness(
            storageCheck: { [auditFile = audit.file] in
                if let problem = await storageCheck() { return problem }
                return auditFile?.health.failure == nil ? nil : "audit_log_not_writable"
            }, degradation: degradation
        ) { [logger] problem in
            if let problem {
                logger.log(.warning, "not ready", [("reason", .string(problem))])
            } else {
                logger.log(.info, "ready")
            }
        }
        self.readiness = readiness
        // With a metrics listener of its own, /metrics is served there only, so the main port need not expose it.
        let metricsHandler = metrics.handler(
            readiness: readiness, accounts: accountService, webhooks: webhooks,
            redis: redisStores?.client.metrics)
        let router = BrokerRoutes.make(
            readiness: readiness, metrics: c.metricsAddress == nil ? metricsHandler : nil, oauth: oauth,
            webhooks: WebhookHandlers(webhooks: webhooks, access: access, wallClock: { Date() }),
            appTokens: AppTokenHandlers(service: appTokens, access: access, audit: audit),
            backup: BackupHandlers(store: backupStore, access: access, audit: audit),
            cors: CORSPolicy(origins: c.corsOrigins))
        // With the default worker count the server runs on the epoll workers the native upstream client uses.
        server = HTTPServer(
            configuration: Self.serverConfiguration(c, logger: logger), router: router,
            observer: AccessLog(logger: logger, enabled: c.accessLog, access: access),
            eventLoops: c.server.workerCount == 0 ? .shared : nil)
        metrics.server.set(server)
        metricsServer = c.metricsAddress.map { address in
            var router = Router(refusals: .errorBody)
            router.add(.GET, "/metrics", metricsHandler)
            // A scraper or two: a small cap and one worker; scrapes stay out of the access log.
            let configuration = HTTPServerConfiguration(
                host: address.host, port: address.port, backlog: 64, maxConnections: 64, limits: c.server.limits,
                headerTimeout: c.server.headerTimeout, bodyTimeout: c.server.bodyTimeout, writeTimeout: c.server.writeTimeout,
                idleTimeout: c.server.idleTimeout, workerCount: 1)
            return HTTPServer(configuration: configuration, router: router)
        }
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

    /// Raises the process's soft open-file limit to its hard limit (no privilege needed) and returns the soft limit
    /// now in force; `token-broker` calls it before it builds the broker, whose connection cap is drawn from it.
    @discardableResult
    public static func raiseOpenFileLimit() -> Int { DescriptorBudget.raiseSoftLimit() }

    /// The main server's configuration: `BROKER_MAX_CONNECTIONS`, lowered to what the open-file limit leaves room for
    /// (``DescriptorBudget``), and says which cap it chose and why in one start-up line.
    static func serverConfiguration(_ c: BrokerConfiguration, logger: BrokerLogger) -> HTTPServerConfiguration {
        let (soft, hard) = DescriptorBudget.currentLimits()
        // The /metrics listener's connections come out of the same descriptors.
        let metricsListener = c.metricsAddress == nil ? 0 : 64 + HTTPServerConfiguration.evictionSlack(cap: 64)
        let budget = DescriptorBudget(limit: min(soft, 1 << 30), extraReserve: metricsListener)
        var server = c.server
        server.maxConnections = min(c.server.maxConnections, budget.connections)
        var fields: [(String, LogValue)] = [
            ("max_connections", .int(server.maxConnections)), ("open_files_limit", .int(budget.limit)),
            ("open_files_hard_limit", .int(min(hard, 1 << 30))), ("reserved_descriptors", .int(budget.reserve)),
        ]
        if server.maxConnections < c.server.maxConnections {
            fields.append(("configured_max_connections", .int(c.server.maxConnections)))
            logger.log(
                .warning,
                "connection cap lowered below BROKER_MAX_CONNECTIONS to fit the open-file limit (raise it with ulimit -n or LimitNOFILE)",
                fields)
        } else {
            logger.log(.info, "connection cap", fields)
        }
        return server
    }

    /// The codec that seals account secrets with the configured (or generated) encryption key.
    static func accountCodec(_ c: BrokerConfiguration, logger: BrokerLogger) throws -> EncryptedAccountCodec {
        let keyring: EncryptionKeyring
        let generated: Bool
        do {
            (keyring, generated) = try EncryptionKeyring.loadOrGenerate(
                environmentValue: c.environment[EncryptionKeyring.environmentVariable], dataDirectory: c.dataDirectory)
        } catch let error as EncryptionKeyError {
            throw ConfigurationError(variable: EncryptionKeyring.environmentVariable, message: error.problem)
        } catch {
            throw StartupError(message: "cannot read or create the encryption key in \(c.dataDirectory): \(error)")
        }
        if generated {
            logger.log(
                .warning, "BROKER_ENCRYPTION_KEY is not set: account secrets are encrypted with a key kept beside the data",
                [("key_file", .string(c.dataDirectory + "/" + EncryptionKeyring.keyFileName)), ("key_id", .string(keyring.current.id))])
        }
        return EncryptedAccountCodec(keyring: keyring)
    }

    /// `token-broker rekey`: re-encrypts every account not sealed with the current key; returns (rewritten, total).
    public static func rekey(configuration c: BrokerConfiguration, logger: BrokerLogger) async throws -> (
        rewritten: Int, total: Int, keyID: String
    ) {
        if let location = c.redisStore { return try await rekeyRedis(configuration: c, location: location, logger: logger) }
        try DataDirectory.prepare(c.dataDirectory)
        // Never under a running broker, whose memory would keep the records as they were.
        let lock: DataDirectoryLock?
        do {
            lock = try DataDirectoryLock.acquire(in: c.dataDirectory)
        } catch {
            throw StartupError(message: "\(error); stop it before rekeying")
        }
        defer { lock?.release() }
        let codec = try accountCodec(c, logger: logger)
        let repository = try JSONFileAccountRepository(
            directory: c.dataDirectory, codec: codec, compactionThreshold: c.accountsCompactBytes)
        Self.reportOpening(repository, logger: logger)
        let result = try await repository.rekey(codec: codec)
        if result.rewritten > 0, FileManager.default.fileExists(atPath: c.dataDirectory + "/" + AccountStoreFormat.migratedDirectoryName) {
            logger.log(
                .warning,
                "accounts.migrated/ (the former layout, kept after the migration) still holds the records as they were "
                    + "before this rekey; remove it once you no longer need to roll back")
        }
        return (result.rewritten, result.total, codec.keyring.current.id)
    }

    static func loadProviders(_ c: BrokerConfiguration) throws -> ProviderRegistry {
        var file: [UInt8]?
        if let path = c.providersFile {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(variable: "BROKER_PROVIDERS_FILE", message: "cannot read \(path)")
            }
            file = Array(data)
        }
        do {
            return try ProviderRegistry.load(environment: c.environment, providersFile: file)
        } catch {
            // A preset's endpoint variable (MICROSOFT_TENANT) is named itself; anything else is the file's.
            throw ConfigurationError(variable: error.variable ?? "BROKER_PROVIDERS_FILE", message: "\(error)")
        }
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
        let flows = self.flows
        let logger = self.logger
        // Expired pending flows are removed once a minute; take() refuses them anyway.
        let task = Task {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 60_000_000_000)
                if let purged = try? await flows.purgeExpired(now: Date()), purged > 0 {
                    logger.log(.info, "expired flows purged", [("count", .int(purged))])
                }
            }
        }
        purgeTask.withLock { $0 = task }
        startDiscovery()
        redisStores?.start()
        backgroundRefresher.start()
        webhooks?.dispatcher.start()
        logger.log(
            .info, "listening",
            [
                ("host", .string(configuration.server.host)), ("port", .int(server.port)),
                ("data_dir", .string(configuration.dataDirectory)), ("public_url", .string(configuration.publicURL)),
                ("store", .string(configuration.redisStore.map { "\($0)" } ?? "files")),
                ("refresh_margin_s", .double(configuration.refreshMargin, decimals: 1)),
                ("refresh_interval_s", .double(configuration.refreshInterval, decimals: 1)),
                ("refresh_concurrency", .int(configuration.refreshConcurrency)),
                ("webhook_urls", .int(configuration.webhooks?.urls.count ?? 0)),
            ] + (metricsServer.map { [("metrics_port", .int($0.port))] } ?? []))
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
        backgroundRefresher.stop()
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
        redisStores?.stop()
        audit.file?.close()
        directoryLock?.release()
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
