import BrokerCore
import BrokerHTTP
import Foundation

extension Broker {
    /// The main server with every route, and the `/metrics` listener when `BROKER_METRICS_ADDR` is set.
    static func servers(
        _ c: BrokerConfiguration, services: BrokerServices, readiness: Readiness, webhooks: Webhooks?, backup: (any AccountBackup)?,
        cookieSecret: [UInt8], audit: AuditTrail, logger: BrokerLogger, now: @escaping @Sendable () -> Date
    ) -> (main: HTTPServer, metrics: HTTPServer?) {
        let registry = services.registry
        let access = AccessControl(
            apiKeys: c.callerKeys, cookieSecret: cookieSecret, sessionMaxAge: 30 * 86_400, browserSessions: c.connectPage)
        let cookies = CookieHeader(publicURL: c.publicURL)
        let appearance = PageAppearance(
            title: c.pageTitle, accent: c.pageAccent.flatMap(PageAccent.init(hex:)) ?? .standard,
            basePath: cookies.basePath,
            iconURLs: registry.all.filter(\.isConfigured).compactMap(\.iconURL))
        let oauth = OAuthHandlers(
            authorization: services.authorization, accounts: services.accounts, registry: registry, access: access,
            cookies: cookies, appearance: appearance, flowTTL: c.flowTTL, logger: logger, audit: audit, now: now)
        // With a metrics listener of its own, /metrics is served there only, so the main port need not expose it.
        let metricsHandler = services.metrics.handler(readiness: readiness, accounts: services.accounts, webhooks: webhooks)
        let router = BrokerRoutes.make(
            readiness: readiness, metrics: c.metricsAddress == nil ? metricsHandler : nil, oauth: oauth,
            webhooks: WebhookHandlers(webhooks: webhooks, access: access, wallClock: { Date() }),
            appTokens: AppTokenHandlers(service: services.appTokens, access: access, audit: audit),
            backup: BackupHandlers(store: backup, access: access, audit: audit),
            forwardAuth: ForwardAuthHandler(
                accounts: services.accounts, registry: registry, access: access, audit: audit),
            proxy: ProxyHandler(
                accounts: services.accounts, registry: registry, access: access, audit: audit, metrics: services.metrics.proxy,
                client: EpollUpstreamClient.sharedClient(caFile: c.upstreamCAFile), timeout: c.proxyTimeout),
            // Verification goes out as proxied calls do: the same client and address rules, under its own timeout.
            credentials: CredentialHandlers(
                accounts: services.accounts, registry: registry, access: access, audit: audit, logger: logger,
                verifier: CredentialVerifier(client: EpollUpstreamClient.sharedClient(caFile: c.upstreamCAFile), timeout: c.verifyTimeout)),
            proxyMaxBodyBytes: c.proxyMaxBodyBytes, cors: CORSPolicy(origins: c.corsOrigins), connectPage: c.connectPage)
        let server = HTTPServer(
            configuration: serverConfiguration(c, logger: logger), router: router,
            observer: AccessLog(logger: logger, enabled: c.accessLog, access: access),
            // With the default worker count the server runs on the epoll workers the native upstream client uses.
            eventLoops: c.server.workerCount == 0 ? .shared : nil)
        services.metrics.server.set(server)
        let metricsServer = c.metricsAddress.map { address in
            var router = Router(refusals: .errorBody)
            router.add(.GET, "/metrics", metricsHandler)
            // A scraper or two: a small cap and one worker; scrapes stay out of the access log.
            let configuration = HTTPServerConfiguration(
                host: address.host, port: address.port, backlog: 64, maxConnections: 64, limits: c.server.limits,
                headerTimeout: c.server.headerTimeout, bodyTimeout: c.server.bodyTimeout, writeTimeout: c.server.writeTimeout,
                idleTimeout: c.server.idleTimeout, workerCount: 1)
            return HTTPServer(configuration: configuration, router: router)
        }
        return (server, metricsServer)
    }

    /// The audit trail, writing `BROKER_AUDIT_LOG` when set; says when the file ended in a partial line.
    static func openAudit(_ c: BrokerConfiguration, metrics: BrokerMetrics, logger: BrokerLogger) throws -> AuditTrail {
        let audit = AuditTrail(
            logger: logger, file: try c.auditLog.map { path throws(ConfigurationError) in try AuditLogFile(path: path, logger: logger) })
        metrics.auditFile.withLock { $0 = audit.file }
        if let file = audit.file, file.cutAtOpen > 0 {
            logger.log(
                .warning, "audit log ended in a partial line (a write cut short before this start); cut it off",
                [("path", .string(c.auditLog ?? "")), ("bytes", .int(file.cutAtOpen))])
        }
        return audit
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
}
