import BrokerCore
import BrokerFileStore
import BrokerHTTP
import BrokerPostgres
import BrokerRedis
import BrokerTLS

/// Every setting of the service, read from the environment in one place.
///
/// Tests pass a literal dictionary; the executable passes `ProcessInfo`'s environment.
/// A bad value stops start-up (exit 2) with a message naming the variable.
public struct BrokerConfiguration: Sendable {
    /// How log lines are written.
    public enum LogFormat: String, Sendable, CaseIterable { case text, json }

    /// The HTTP server's address, limits and deadlines.
    public var server: HTTPServerConfiguration
    /// Where accounts, flows and generated secrets live (`BROKER_DATA_DIR`).
    public var dataDirectory: String
    /// Text for people at a terminal, JSON for log collectors (`BROKER_LOG_FORMAT`).
    public var logFormat: LogFormat
    /// Whether one line per request is logged (`BROKER_ACCESS_LOG`).
    public var accessLog: Bool
    /// Seconds in-flight requests get to finish after SIGTERM (`BROKER_SHUTDOWN_GRACE`).
    public var shutdownGrace: Double
    /// The URL browsers reach the broker at; `redirect_uri` is this plus `/callback` (`BROKER_PUBLIC_URL`).
    public var publicURL: String = "http://localhost:8080"
    /// The key back ends present as `Authorization: Bearer KEY` (`BROKER_API_KEY`); nil disables service endpoints.
    public var apiKey: Secret?
    /// Named keys back ends present the same way (`BROKER_API_KEYS=name:key,…`); any of them is valid, so a key is
    /// rotated by adding the new one, moving the callers, then removing the old one. Logs name the key, never show it.
    public var apiKeys: [NamedAPIKey] = []
    /// Where token hand-outs, deletions, revocations and finished flows are appended as JSON lines (`BROKER_AUDIT_LOG`);
    /// nil keeps them in the log only.
    public var auditLog: String?
    /// The cookie-signing secret (`BROKER_SECRET`); nil means generate one into the data directory.
    public var secret: Secret?
    /// Path of the JSON providers file (`BROKER_PROVIDERS_FILE`).
    public var providersFile: String?
    /// Seconds a started authorization stays valid (`BROKER_FLOW_TTL`).
    public var flowTTL: Double = 600
    /// `BROKER_MAX_PENDING_FLOWS`: sign-ins started and not yet finished that the file store keeps (the oldest go first).
    public var maxPendingFlows = 50_000
    /// `BROKER_ACCOUNTS_COMPACT_BYTES`: the account journal size (bytes) past which the file store compacts it into
    /// its snapshot, unless the snapshot is larger (then a quarter of the snapshot's size).
    public var accountsCompactBytes = StorageBackendFactory.defaultAccountsCompactBytes
    /// Origins `return_to` may point at (`BROKER_RETURN_TO_ALLOWLIST`, comma-separated).
    public var returnToAllowlist: [String] = []
    /// Front-end origins whose pages may call the browser-session endpoints with credentials (`BROKER_CORS_ORIGINS`, comma-separated).
    public var corsOrigins: [String] = []
    /// Whether the public connect page (`/`, `/disconnect`, browser `GET /authorize`) and browser token reading are on
    /// (`BROKER_CONNECT_PAGE`, default on); off for back-end-only deployments, where connect sessions still work.
    public var connectPage = true
    /// Seconds an outbound call to a provider may take before it is cut (`BROKER_UPSTREAM_TIMEOUT`).
    public var upstreamTimeout: Double = 10
    /// Bytes of a provider's answer, after content decoding, the broker reads before refusing it (`BROKER_UPSTREAM_MAX_BYTES`).
    public var upstreamMaxBytes = EpollUpstreamClient.defaultMaxResponseBytes
    /// Seconds a proxied call (`/proxy/…`) may take, from the request to the last byte of the answer
    /// (`BROKER_PROXY_TIMEOUT`): a download or an event stream longer than this is cut.
    public var proxyTimeout: Double = 300
    /// The largest request body `/proxy/…` takes (`BROKER_PROXY_MAX_BODY_BYTES`); it streams, so this bounds time, not memory.
    public var proxyMaxBodyBytes = 100 << 20
    /// A PEM file of CA certificates the native client trusts for `https://` besides the system's store
    /// (`BROKER_UPSTREAM_CA_FILE`): a private CA is added, certificate checking is never turned off.
    public var upstreamCAFile: String?
    /// Seconds before expiry from which an account with a refresh token is refreshed (`BROKER_REFRESH_MARGIN`, 0 = at expiry).
    public var refreshMargin: Double = 300
    /// Seconds between background refresh sweeps (`BROKER_REFRESH_INTERVAL`); 0 turns the background refresher off.
    public var refreshInterval: Double = 60
    /// Seconds between scheduled verifications of entered credentials (`BROKER_VERIFY_INTERVAL`); 0 (the default)
    /// turns them off: each one calls a provider for every such account.
    public var verifyInterval: Double = 0
    /// Seconds one verification request may take (`BROKER_VERIFY_TIMEOUT`), its own and not the proxy's.
    public var verifyTimeout: Double = 15
    /// Seconds between device sign-in sweeps (`BROKER_DEVICE_POLL_TICK`); each flow is still polled only at its
    /// provider's interval. 0 turns the device poller off on this replica.
    public var devicePollTick: Double = 1
    /// Seconds of refresh failures without a success after which an account becomes `refresh_exhausted`
    /// (`BROKER_REFRESH_GIVE_UP`, 60 s to 365 days, default four days).
    public var refreshGiveUp: Double = RefreshCoordinator.Policy.defaultGiveUp
    /// Background refresh calls in flight at once per provider (`BROKER_REFRESH_CONCURRENCY`, 1–1000).
    public var refreshConcurrency = BackgroundRefresher.Herd.defaultConcurrency
    /// Where accounts, flows and refresh locks live when not in JSON files (`BROKER_STORE=redis://…` or `redis-sentinel://…`).
    public var redisStore: RedisLocation?
    /// Where everything lives when in PostgreSQL (`BROKER_STORE=postgres://…`, the password possibly from
    /// `BROKER_STORE_PASSWORD_FILE`, md5 logins only with `BROKER_POSTGRES_ALLOW_MD5=1`).
    public var postgresStore: PostgresConfiguration?
    /// Accounts each replica keeps in its client-side cache of Redis (`BROKER_REDIS_CACHE_MAX`, 0 = no cache).
    public var redisCacheMax = 100_000
    /// Accounts each replica keeps in its cache of PostgreSQL, kept coherent by `LISTEN`/`NOTIFY`
    /// (`BROKER_POSTGRES_CACHE_MAX`, 0 = no cache).
    public var postgresCacheMax = 100_000
    /// Replicas that must confirm each account write before it is acknowledged (`BROKER_REDIS_MIN_REPLICAS`); nil: 1 with Sentinel, else 0.
    public var redisMinReplicas: Int?
    /// Where `/metrics` is served on a listener of its own (`BROKER_METRICS_ADDR`); nil serves it on the main port.
    public var metricsAddress: ListenAddress?
    /// The connect page's heading and the name its pages go by (`BROKER_PAGE_TITLE`).
    public var pageTitle = "token-broker"
    /// The colour of the connect page's buttons and links as `#rrggbb`, lowercase (`BROKER_PAGE_ACCENT`); nil keeps the default.
    public var pageAccent: String?
    /// Where events about accounts are sent, signed and retried (`BROKER_WEBHOOK_*`); nil sends none.
    public var webhooks: WebhookSettings?
    /// The keys of `BROKER_ENCRYPTION_KEY`, parsed; nil when it is unset (the store's own key is read, or made).
    public var encryptionKeyring: EncryptionKeyring?
    /// Every provider: the presets with their credentials from the environment, then the providers file's
    /// entries (`BROKER_PROVIDERS_FILE`). Empty when the configuration was read without providers.
    public var providers: [ProviderConfiguration] = []

    /// Every valid API key with its name: `BROKER_API_KEY` as `default`, then the `BROKER_API_KEYS` entries.
    public var callerKeys: [NamedAPIKey] {
        let keys = (apiKey.map { [NamedAPIKey(name: NamedAPIKey.defaultName, key: $0)] } ?? []) + apiKeys
        return keys.map { key in
            var scoped = key
            scoped.grant = keyGrants[key.name] ?? .all
            return scoped
        }
    }
    /// Variables set that no command reads, each with the closest known name (reported once at start-up).
    public var unknownVariables: [(name: String, closest: String?)] = []
    /// The scopes and limits of the keys `BROKER_API_KEY_SCOPES` names, by key name; others hold everything.
    public var keyGrants: [String: KeyGrant] = [:]

    /// Creates a configuration with every default.
    public init(
        server: HTTPServerConfiguration = HTTPServerConfiguration(), dataDirectory: String = "./data",
        logFormat: LogFormat = .text, accessLog: Bool = true, shutdownGrace: Double = 10
    ) {
        self.server = server
        self.dataDirectory = dataDirectory
        self.logFormat = logFormat
        self.accessLog = accessLog
        self.shutdownGrace = shutdownGrace
    }

    /// Reads the configuration from environment variables; unset ones take their defaults.
    ///
    /// This is the one place the environment is read: the providers' credentials and
    /// the encryption key are resolved here, and nothing raw is carried further.
    /// `readingProviders: false` leaves ``providers`` empty and the providers file
    /// unread, for commands that only talk to a running broker (`healthcheck`).
    public static func from(
        environment given: [String: String], readingProviders: Bool = true
    ) throws(ConfigurationError) -> BrokerConfiguration {
        // Secrets given as files (`BROKER_SECRET_FILE`) are read first, so everything below sees `BROKER_SECRET`.
        let env = try EnvironmentReader.readingSecretFiles(given)
        let read = EnvironmentReader(env)
        var server = HTTPServerConfiguration()
        server.host = try read.host("BROKER_HOST", default: "127.0.0.1")
        server.port = try read.integer("BROKER_PORT", default: 8080, range: 0...65535)
        server.maxConnections = try read.integer("BROKER_MAX_CONNECTIONS", default: 10_000, range: 1...1_000_000)
        server.workerCount = try read.integer("BROKER_WORKERS", default: 0, range: 0...256)
        server.limits.maxTargetBytes = try read.integer("BROKER_MAX_URI_BYTES", default: 8192, range: 256...1 << 20)
        server.limits.maxHeaderBytes = try read.integer("BROKER_MAX_HEADER_BYTES", default: 32768, range: 1024...1 << 22)
        server.limits.maxHeaderCount = try read.integer("BROKER_MAX_HEADERS", default: 100, range: 1...10_000)
        server.limits.maxBodyBytes = try read.integer("BROKER_MAX_BODY_BYTES", default: 1 << 20, range: 0...1 << 30)
        server.headerTimeout = try read.seconds("BROKER_HEADER_TIMEOUT", default: 10)
        server.bodyTimeout = try read.seconds("BROKER_BODY_TIMEOUT", default: 30)
        server.writeTimeout = try read.seconds("BROKER_WRITE_TIMEOUT", default: 30)
        server.idleTimeout = try read.seconds("BROKER_IDLE_TIMEOUT", default: 75)
        var c = BrokerConfiguration(
            server: server,
            dataDirectory: try read.string("BROKER_DATA_DIR", default: "./data"),
            logFormat: try read.choice("BROKER_LOG_FORMAT", default: .text),
            accessLog: try read.boolean("BROKER_ACCESS_LOG", default: true),
            shutdownGrace: try read.seconds("BROKER_SHUTDOWN_GRACE", default: 10))
        c.publicURL = try read.publicURL("BROKER_PUBLIC_URL", default: "http://localhost:8080")
        c.apiKey = try read.secret("BROKER_API_KEY", minimumLength: 16)
        c.apiKeys = try NamedAPIKey.parseList(read.raw("BROKER_API_KEYS"), variable: "BROKER_API_KEYS")
        if c.apiKey != nil, c.apiKeys.contains(where: { $0.name == NamedAPIKey.defaultName }) {
            throw ConfigurationError(
                variable: "BROKER_API_KEYS",
                message: "names a key \"default\", the name BROKER_API_KEY already takes; rename one of them")
        }
        if let key = c.apiKey, let twin = c.apiKeys.first(where: { $0.key.value == key.value }) {
            throw ConfigurationError(
                variable: "BROKER_API_KEYS",
                message: "the key named \(twin.name) is BROKER_API_KEY's key (named \(NamedAPIKey.defaultName)); give each key one name")
        }
        c.keyGrants = try KeyGrant.parse(
            read.raw("BROKER_API_KEY_SCOPES"), keys: c.callerKeys.map(\.name), variable: "BROKER_API_KEY_SCOPES")
        c.auditLog = read.raw("BROKER_AUDIT_LOG")
        c.secret = try read.secret("BROKER_SECRET", minimumLength: 32)
        c.providersFile = read.raw("BROKER_PROVIDERS_FILE")
        c.flowTTL = try read.seconds("BROKER_FLOW_TTL", default: 600)
        c.maxPendingFlows = try read.integer("BROKER_MAX_PENDING_FLOWS", default: 50_000, range: 100...10_000_000)
        c.accountsCompactBytes = try read.integer(
            "BROKER_ACCOUNTS_COMPACT_BYTES", default: StorageBackendFactory.defaultAccountsCompactBytes, range: 4096...(1 << 40))
        c.returnToAllowlist = try read.origins("BROKER_RETURN_TO_ALLOWLIST")
        c.corsOrigins = try read.exactOrigins("BROKER_CORS_ORIGINS")
        c.connectPage = try read.boolean("BROKER_CONNECT_PAGE", default: true)
        c.unknownVariables = UnknownVariables.find(in: given)
        c.upstreamTimeout = try read.seconds("BROKER_UPSTREAM_TIMEOUT", default: 10)
        c.upstreamMaxBytes = try read.integer(
            "BROKER_UPSTREAM_MAX_BYTES", default: EpollUpstreamClient.defaultMaxResponseBytes,
            range: 1024...64 << 20)
        c.proxyTimeout = try read.seconds("BROKER_PROXY_TIMEOUT", default: 300)
        c.proxyMaxBodyBytes = try read.integer("BROKER_PROXY_MAX_BODY_BYTES", default: 100 << 20, range: 1024...(1 << 40))
        // The URLSession client is no longer linked into token-broker: `native` is the only client, so anything else stops.
        if let client = read.raw("BROKER_UPSTREAM_CLIENT"), client != "native" {
            throw ConfigurationError(
                variable: "BROKER_UPSTREAM_CLIENT",
                message: "must be native (or unset): the broker's own client is the only one built in; remove the setting")
        }
        if let caFile = read.raw("BROKER_UPSTREAM_CA_FILE") {
            // Loaded now, so a missing or unreadable file fails at start rather than at the first provider call.
            do throws(TLSError) {
                _ = try TLSContext(caFile: caFile)
            } catch {
                throw ConfigurationError(variable: "BROKER_UPSTREAM_CA_FILE", message: "cannot be used: \(error.reason)")
            }
            c.upstreamCAFile = caFile
        }
        c.refreshMargin = try read.secondsOrZero("BROKER_REFRESH_MARGIN", default: 300)
        c.refreshInterval = try read.secondsOrZero("BROKER_REFRESH_INTERVAL", default: 60)
        c.verifyInterval = try read.secondsOrZero("BROKER_VERIFY_INTERVAL", default: 0)
        c.verifyTimeout = try read.seconds("BROKER_VERIFY_TIMEOUT", default: 15)
        c.devicePollTick = try read.secondsOrZero("BROKER_DEVICE_POLL_TICK", default: 1)
        c.refreshGiveUp = Double(
            try read.integer("BROKER_REFRESH_GIVE_UP", default: Int(RefreshCoordinator.Policy.defaultGiveUp), range: 60...365 * 86_400))
        c.refreshConcurrency = try read.integer(
            "BROKER_REFRESH_CONCURRENCY", default: BackgroundRefresher.Herd.defaultConcurrency, range: 1...1000)
        // `files` (the default, named) keeps accounts and flows in JSON files under BROKER_DATA_DIR.
        if let store = read.raw("BROKER_STORE"), store.hasPrefix("postgres://") || store.hasPrefix("postgresql://") {
            c.postgresStore = try postgresStore(store, read)
        } else if let store = read.raw("BROKER_STORE"), store != "files" {
            do {
                c.redisStore = try RedisLocation(parsing: store)
            } catch {
                throw ConfigurationError(
                    variable: "BROKER_STORE",
                    message: "must be files, postgres[ql]://user[:password]@host:5432[,host:5432…]/db[?…], "
                        + "redis[s]://[user:password@]host:port[/db] or redis-sentinel://[user:password@]host:26379[,host:26379…]/name[/db]: \(error.reason)"
                )
            }
        }
        c.redisStore = try redisTLS(for: c.redisStore, read)
        c.metricsAddress = try read.address("BROKER_METRICS_ADDR")
        if let metrics = c.metricsAddress, metrics.port != 0, metrics.port == c.server.port {
            throw ConfigurationError(variable: "BROKER_METRICS_ADDR", message: "must use another port than BROKER_PORT (\(metrics.port))")
        }
        c.pageTitle = try read.text("BROKER_PAGE_TITLE", default: "token-broker", maximumLength: 80)
        c.pageAccent = try read.hexColour("BROKER_PAGE_ACCENT")
        c.webhooks = try WebhookSettings.read(read)
        c.redisCacheMax = try read.integer("BROKER_REDIS_CACHE_MAX", default: 100_000, range: 0...10_000_000)
        c.postgresCacheMax = try read.integer("BROKER_POSTGRES_CACHE_MAX", default: 100_000, range: 0...10_000_000)
        if read.raw("BROKER_REDIS_MIN_REPLICAS") != nil {
            c.redisMinReplicas = try read.integer("BROKER_REDIS_MIN_REPLICAS", default: 0, range: 0...16)
        }
        // Set but empty is an error, not "unset": a key that did not reach the process must not be replaced by a new one.
        if let key = env[EncryptionKeyring.environmentVariable] {
            do {
                c.encryptionKeyring = try EncryptionKeyring.parse(key)
            } catch {
                throw ConfigurationError(variable: EncryptionKeyring.environmentVariable, message: error.problem)
            }
        }
        if readingProviders {
            c.providers = try loadProviders(environment: env, providersFile: c.providersFile)
        }
        return c
    }
}

extension BrokerConfiguration {
    /// `environment` with every secret given as a file (`BROKER_API_KEY_FILE=/run/secrets/api-key`, a preset's
    /// `GITHUB_CLIENT_SECRET_FILE`) read into its variable, for the commands that read the environment themselves
    /// (`accounts`, `backup`, `restore`); ``from(environment:readingProviders:)`` does the same.
    public static func environmentReadingSecretFiles(_ environment: [String: String]) throws(ConfigurationError) -> [String: String] {
        try EnvironmentReader.readingSecretFiles(environment)
    }
}

/// A numeric address and a TCP port to listen on, as `BROKER_METRICS_ADDR` gives them (`127.0.0.1:9090`, `[::]:9090`).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// A numeric IPv4 or IPv6 address, without brackets.
    public var host: String
    /// The port; 0 picks a free one.
    public var port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, with an IPv6 address in brackets (RFC 3986 §3.2.2).
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A configuration value that cannot be used; start-up stops with exit code 2.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The environment variable at fault.
    public let variable: String
    /// What is wrong with it, without echoing secret values.
    public let message: String

    /// Creates an error for one variable.
    public init(variable: String, message: String) {
        self.variable = variable
        self.message = message
    }

    public var description: String { "\(variable): \(message)" }
}
