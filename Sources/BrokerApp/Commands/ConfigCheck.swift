import BrokerCore

/// `token-broker config check`: reads the environment and the providers file as `serve` would,
/// and prints the resolved configuration with every secret shown only as set or unset.
public enum ConfigCheck {
    /// The report for `configuration`, one `name: value` line each, then one line per provider.
    ///
    /// Every problem `serve` would stop at (a bad value, the providers file, the encryption key)
    /// was already thrown by ``BrokerConfiguration/from(environment:readingProviders:)``, naming its variable.
    public static func report(_ configuration: BrokerConfiguration) -> String {
        let c = configuration
        let registry = ProviderRegistry(providers: c.providers)
        func set(_ value: Any?) -> String { value == nil ? "unset" : "set" }
        var lines: [(String, String)] = [
            ("BROKER_HOST", c.server.host), ("BROKER_PORT", String(c.server.port)),
            ("BROKER_PUBLIC_URL", c.publicURL), ("redirect URI", c.publicURL + "/callback"),
            ("BROKER_STORE", c.storeDescription),
            ("BROKER_DATA_DIR", c.dataDirectory),
            ("BROKER_API_KEY", set(c.apiKey)),
            ("BROKER_API_KEYS", c.apiKeys.isEmpty ? "unset" : c.apiKeys.map(\.name).joined(separator: ",")),
        ]
        // Each key by name with what it may do (BROKER_API_KEY_SCOPES); never the key.
        for key in c.callerKeys { lines.append(("key \(key.name)", key.grant.description)) }
        lines += [
            ("BROKER_AUDIT_LOG", c.auditLog ?? "unset (audit events go to the log only)"),
            ("BROKER_SECRET", set(c.secret)),
            ("BROKER_ENCRYPTION_KEY", set(c.encryptionKeyring)),
            ("BROKER_PROVIDERS_FILE", c.providersFile ?? "unset"),
            ("BROKER_RETURN_TO_ALLOWLIST", c.returnToAllowlist.isEmpty ? "empty" : c.returnToAllowlist.joined(separator: ",")),
            ("BROKER_CORS_ORIGINS", c.corsOrigins.isEmpty ? "empty" : c.corsOrigins.joined(separator: ",")),
            ("BROKER_FLOW_TTL", "\(c.flowTTL) s"), ("BROKER_MAX_PENDING_FLOWS", String(c.maxPendingFlows)),
            ("BROKER_UPSTREAM_TIMEOUT", "\(c.upstreamTimeout) s"), ("BROKER_UPSTREAM_MAX_BYTES", String(c.upstreamMaxBytes)),
            ("BROKER_REFRESH_MARGIN", "\(c.refreshMargin) s"), ("BROKER_REFRESH_INTERVAL", "\(c.refreshInterval) s"),
            ("BROKER_REFRESH_CONCURRENCY", "\(c.refreshConcurrency) per provider"),
            ("BROKER_REFRESH_GIVE_UP", "\(Int(c.refreshGiveUp)) s"),
            ("BROKER_LOG_FORMAT", c.logFormat.rawValue), ("BROKER_ACCESS_LOG", c.accessLog ? "on" : "off"),
            ("BROKER_SHUTDOWN_GRACE", "\(c.shutdownGrace) s"),
            ("BROKER_PAGE_TITLE", c.pageTitle), ("BROKER_PAGE_ACCENT", c.pageAccent ?? "#0b57d0 (default)"),
            ("BROKER_METRICS_ADDR", c.metricsAddress.map { "\($0) (/metrics only there)" } ?? "unset (/metrics on the main port)"),
        ]
        lines += WebhookSettings.report(c.webhooks)
        for provider in registry.all {
            let state = provider.isConfigured ? "configured" : "not configured (set \(provider.missingSettings.joined(separator: ", ")))"
            lines.append(("provider \(provider.name)", "\(provider.kind.rawValue), \(state)"))
        }
        let width = lines.map(\.0.count).max() ?? 0
        return lines.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n")
    }
}
