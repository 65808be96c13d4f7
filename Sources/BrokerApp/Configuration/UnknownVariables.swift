import BrokerCore

/// Variables set in the environment that the broker does not read: a `BROKER_*` name it does not know, or one close to a
/// preset's variable (`GITHUB_CLIENTID`). Each is reported once at start-up with the closest known name; values never.
enum UnknownVariables {
    /// Every `BROKER_*` variable any command reads (`X_FILE` of each is known too). ConfigurationDocumentationTests holds
    /// this list to the names the code reads.
    static let broker: Set<String> = [
        "BROKER_ACCESS_LOG", "BROKER_ACCOUNTS_COMPACT_BYTES", "BROKER_API_KEY", "BROKER_API_KEYS", "BROKER_API_KEYS_FILE",
        "BROKER_API_KEY_FILE", "BROKER_API_KEY_SCOPES", "BROKER_AUDIT_LOG", "BROKER_BODY_TIMEOUT", "BROKER_CONNECT_PAGE",
        "BROKER_CORS_ORIGINS", "BROKER_DATA_DIR", "BROKER_DEMO_PORT", "BROKER_DEMO_TOKEN_LIFETIME", "BROKER_DEVICE_POLL_TICK",
        "BROKER_ENCRYPTION_KEY",
        "BROKER_ENCRYPTION_KEY_FILE", "BROKER_FLOW_TTL", "BROKER_HEADER_TIMEOUT", "BROKER_HOST", "BROKER_IDLE_TIMEOUT", "BROKER_LOG_FORMAT",
        "BROKER_MAX_BODY_BYTES", "BROKER_MAX_CONNECTIONS", "BROKER_MAX_HEADERS", "BROKER_MAX_HEADER_BYTES", "BROKER_MAX_PENDING_FLOWS",
        "BROKER_MAX_URI_BYTES", "BROKER_METRICS_ADDR", "BROKER_PAGE_ACCENT", "BROKER_PAGE_TITLE", "BROKER_PORT",
        "BROKER_POSTGRES_ALLOW_MD5", "BROKER_PROVIDERS_FILE",
        "BROKER_PROXY_MAX_BODY_BYTES", "BROKER_PROXY_TIMEOUT", "BROKER_PUBLIC_URL", "BROKER_POSTGRES_CACHE_MAX", "BROKER_REDIS_CACHE_MAX",
        "BROKER_REDIS_MIN_REPLICAS",
        "BROKER_REDIS_TLS_CA_FILE", "BROKER_REDIS_TLS_CERT_FILE", "BROKER_REDIS_TLS_KEY_FILE", "BROKER_REFRESH_CONCURRENCY",
        "BROKER_REFRESH_GIVE_UP", "BROKER_REFRESH_INTERVAL", "BROKER_REFRESH_MARGIN", "BROKER_RETURN_TO_ALLOWLIST", "BROKER_SECRET",
        "BROKER_SECRET_FILE", "BROKER_SHUTDOWN_GRACE", "BROKER_STORE", "BROKER_STORE_FILE", "BROKER_STORE_PASSWORD_FILE",
        "BROKER_UPSTREAM_CA_FILE",
        "BROKER_UPSTREAM_CLIENT",
        "BROKER_UPSTREAM_MAX_BYTES", "BROKER_UPSTREAM_TIMEOUT", "BROKER_URL", "BROKER_VERIFY_INTERVAL", "BROKER_VERIFY_TIMEOUT",
        "BROKER_WEBHOOK_EVENTS", "BROKER_WEBHOOK_RETRY_BASE",
        "BROKER_WEBHOOK_RETRY_CAP", "BROKER_WEBHOOK_RETRY_FOR", "BROKER_WEBHOOK_SECRET", "BROKER_WEBHOOK_SECRET_FILE",
        "BROKER_WEBHOOK_TIMEOUT", "BROKER_WEBHOOK_URL", "BROKER_WORKERS", "BROKER_WRITE_TIMEOUT",
    ]

    /// The unknown names in `environment`, sorted, each with the closest known name when one is near.
    static func find(in environment: [String: String]) -> [(name: String, closest: String?)] {
        let presets = Set(ProviderPresets.environmentVariables)
        var found: [(name: String, closest: String?)] = []
        for name in environment.keys.sorted() {
            let base = name.hasSuffix("_FILE") ? String(name.dropLast("_FILE".count)) : name
            if broker.contains(name) || broker.contains(base) || presets.contains(base) { continue }
            if name.hasPrefix("BROKER_") {
                found.append((name, closest(to: name, in: broker, within: 3)))
            } else if let near = closest(to: name, in: presets, within: 2) {
                // Other variables belong to the rest of the system (GITHUB_SHA in CI): only a near miss is a typo.
                found.append((name, near))
            }
        }
        return found
    }

    /// The known name nearest `name` by edit distance, when it is at most `limit` edits away.
    static func closest(to name: String, in known: Set<String>, within limit: Int) -> String? {
        var best: (name: String, distance: Int)?
        for candidate in known.sorted() {
            let distance = editDistance(Array(name.utf8), Array(candidate.utf8), limit: limit)
            if distance <= limit, distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Levenshtein distance, giving up (limit + 1) once every path is past `limit`.
    static func editDistance(_ a: [UInt8], _ b: [UInt8], limit: Int) -> Int {
        if abs(a.count - b.count) > limit { return limit + 1 }
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = current[0]
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                rowMinimum = min(rowMinimum, current[j])
            }
            if rowMinimum > limit { return limit + 1 }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
