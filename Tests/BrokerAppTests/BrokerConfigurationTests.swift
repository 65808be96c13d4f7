import BrokerRedis
import Testing

@testable import BrokerApp

/// Configuration comes from the environment in one place, and every bad value names its variable.
@Suite struct BrokerConfigurationTests {
    @Test func theDocumentedDefaultStoreCanBeNamed() throws {
        #expect(try BrokerConfiguration.from(environment: ["BROKER_STORE": "files"]).redisStore == nil)
        #expect(throws: ConfigurationError.self) { try BrokerConfiguration.from(environment: ["BROKER_STORE": "file"]) }
    }

    @Test func aPresetsEndpointVariableIsNamedWhenItsValueCannotStandInAURL() throws {
        let error = #expect(throws: ConfigurationError.self) {
            try BrokerConfiguration.from(environment: ["GITLAB_URL": "gitlab.example.com/evil?x"])
        }
        #expect(error?.variable == "GITLAB_URL")
        #expect(error?.description.hasPrefix("GITLAB_URL: preset \"gitlab\": must be an absolute http or https URL") == true)
    }

    @Test func readsTheRedisSettings() throws {
        let sentinel = try BrokerConfiguration.from(environment: [
            "BROKER_STORE": "redis-sentinel://:pw@s1:26379,s2:26379/mymaster/2", "BROKER_REDIS_CACHE_MAX": "0",
            "BROKER_REDIS_MIN_REPLICAS": "2",
        ])
        guard case .sentinel(let url)? = sentinel.redisStore else {
            Issue.record("expected a Sentinel location, got \(String(describing: sentinel.redisStore))")
            return
        }
        #expect(url.primaryName == "mymaster" && url.sentinels.count == 2 && url.database == 2)
        #expect(sentinel.redisCacheMax == 0)
        #expect(sentinel.redisMinReplicas == 2)
        let plain = try BrokerConfiguration.from(environment: ["BROKER_STORE": "redis://h:6379"])
        #expect(plain.redisCacheMax == 100_000)
        #expect(plain.redisMinReplicas == nil)
        for (name, value) in [
            ("BROKER_REDIS_CACHE_MAX", "-1"), ("BROKER_REDIS_MIN_REPLICAS", "17"), ("BROKER_STORE", "redis-sentinel://s1"),
        ] {
            let error = #expect(throws: ConfigurationError.self) { try BrokerConfiguration.from(environment: [name: value]) }
            #expect(error?.variable == name)
        }
    }

    @Test func readsTheTLSSettingsOfARedissStoreAndRefusesThemElsewhere() throws {
        let plainTLS = try BrokerConfiguration.from(environment: ["BROKER_STORE": "rediss://redis.internal:6380/1"])
        #expect(plainTLS.redisStore == .server(RedisURL(host: "redis.internal", port: 6380, database: 1, tls: RedisTLS())))
        let refusals: [([String: String], String, String)] = [
            (["BROKER_REDIS_TLS_CA_FILE": "/etc/ca.pem"], "BROKER_REDIS_TLS_CA_FILE", "only used with BROKER_STORE=rediss://"),
            (
                ["BROKER_STORE": "redis://h:6379", "BROKER_REDIS_TLS_CERT_FILE": "/c.pem", "BROKER_REDIS_TLS_KEY_FILE": "/k.pem"],
                "BROKER_REDIS_TLS_CERT_FILE", "only used with BROKER_STORE=rediss://"
            ),
            (["BROKER_STORE": "rediss://h", "BROKER_REDIS_TLS_KEY_FILE": "/k.pem"], "BROKER_REDIS_TLS_CERT_FILE", "must be set with"),
            (["BROKER_STORE": "rediss://h", "BROKER_REDIS_TLS_CERT_FILE": "/c.pem"], "BROKER_REDIS_TLS_KEY_FILE", "must be set with"),
            (
                ["BROKER_STORE": "rediss://h", "BROKER_REDIS_TLS_CA_FILE": "/nonexistent/ca.pem"], "BROKER_REDIS_TLS_CA_FILE",
                "cannot be used"
            ),
            (
                ["BROKER_STORE": "rediss://h", "BROKER_REDIS_TLS_CERT_FILE": "/nonexistent/c.pem", "BROKER_REDIS_TLS_KEY_FILE": "/k.pem"],
                "BROKER_REDIS_TLS_CERT_FILE", "cannot be used"
            ),
        ]
        for (environment, variable, fragment) in refusals {
            let error = #expect(throws: ConfigurationError.self) { try BrokerConfiguration.from(environment: environment) }
            #expect(error?.variable == variable, "\(environment)")
            #expect(error?.description.contains(fragment) == true, "\(String(describing: error))")
        }
    }

    @Test func theNativeClientIsTheOnlyOneAndAnotherStopsTheStartNamingTheVariable() throws {
        _ = try BrokerConfiguration.from(environment: ["BROKER_UPSTREAM_CLIENT": "native"])
        let error = #expect(throws: ConfigurationError.self) {
            try BrokerConfiguration.from(environment: ["BROKER_UPSTREAM_CLIENT": "urlsession"])
        }
        #expect(error?.variable == "BROKER_UPSTREAM_CLIENT")
    }

    @Test func readsTheRefreshConcurrencyAndRefusesOneOutOfRange() throws {
        #expect(try BrokerConfiguration.from(environment: [:]).refreshConcurrency == 8)
        #expect(try BrokerConfiguration.from(environment: ["BROKER_REFRESH_CONCURRENCY": "32"]).refreshConcurrency == 32)
        for bad in ["0", "-1", "1001", "eight", "2.5"] {
            do {
                _ = try BrokerConfiguration.from(environment: ["BROKER_REFRESH_CONCURRENCY": bad])
                Issue.record("BROKER_REFRESH_CONCURRENCY=\(bad) was accepted")
            } catch {
                #expect(error.variable == "BROKER_REFRESH_CONCURRENCY")
            }
        }
    }

    @Test func defaultsWhenNothingIsSet() throws {
        let c = try BrokerConfiguration.from(environment: [:])
        #expect(c.server.host == "127.0.0.1")
        #expect(c.server.port == 8080)
        #expect(c.dataDirectory == "./data")
        #expect(c.server.maxConnections == 10_000)
        #expect(c.server.idleTimeout == 75)
        #expect(c.server.limits.maxBodyBytes == 1 << 20)
        #expect(c.shutdownGrace == 10)
        #expect(c.logFormat == .text)
        #expect(c.accessLog)
        #expect(c.upstreamMaxBytes == 1_048_576)
    }

    @Test func readsEverySetting() throws {
        let c = try BrokerConfiguration.from(environment: [
            "BROKER_HOST": "::", "BROKER_PORT": "0", "BROKER_DATA_DIR": "/tmp/x",
            "BROKER_MAX_CONNECTIONS": "50", "BROKER_HEADER_TIMEOUT": "2.5", "BROKER_IDLE_TIMEOUT": "5",
            "BROKER_MAX_BODY_BYTES": "2048", "BROKER_LOG_FORMAT": "json", "BROKER_ACCESS_LOG": "off",
            "BROKER_SHUTDOWN_GRACE": "3", "BROKER_UPSTREAM_MAX_BYTES": "65536",
        ])
        #expect(c.server.host == "::")
        #expect(c.server.port == 0)
        #expect(c.dataDirectory == "/tmp/x")
        #expect(c.server.maxConnections == 50)
        #expect(c.server.headerTimeout == 2.5)
        #expect(c.server.idleTimeout == 5)
        #expect(c.server.limits.maxBodyBytes == 2048)
        #expect(c.logFormat == .json)
        #expect(!c.accessLog)
        #expect(c.shutdownGrace == 3)
        #expect(c.upstreamMaxBytes == 65536)
    }

    @Test(arguments: [
        ("127.0.0.1:9090", ListenAddress(host: "127.0.0.1", port: 9090)), ("0.0.0.0:0", ListenAddress(host: "0.0.0.0", port: 0)),
        ("[::]:9100", ListenAddress(host: "::", port: 9100)), ("[::1]:9090", ListenAddress(host: "::1", port: 9090)),
    ])
    func readsTheMetricsAddress(value: String, address: ListenAddress) throws {
        let c = try BrokerConfiguration.from(environment: ["BROKER_METRICS_ADDR": value])
        #expect(c.metricsAddress == address)
        #expect(c.metricsAddress?.description == value)
        #expect(try BrokerConfiguration.from(environment: [:]).metricsAddress == nil)
    }

    @Test func readsThePageTitleAndAccent() throws {
        let c = try BrokerConfiguration.from(environment: ["BROKER_PAGE_TITLE": "Acme <Accounts> ✓", "BROKER_PAGE_ACCENT": "#6A1B9A"])
        #expect(c.pageTitle == "Acme <Accounts> ✓")
        #expect(c.pageAccent == "#6a1b9a")
        let defaults = try BrokerConfiguration.from(environment: [:])
        #expect(defaults.pageTitle == "token-broker")
        #expect(defaults.pageAccent == nil)
    }

    @Test(arguments: ["1024", "67108864"])
    func acceptsTheEndsOfTheUpstreamAnswerCap(value: String) throws {
        let c = try BrokerConfiguration.from(environment: ["BROKER_UPSTREAM_MAX_BYTES": value])
        #expect(c.upstreamMaxBytes == Int(value))
    }

    @Test(arguments: [
        ("BROKER_PORT", "http"), ("BROKER_PORT", "70000"), ("BROKER_PORT", "-1"),
        ("BROKER_HOST", "localhost"), ("BROKER_HOST", "1.2.3"), ("BROKER_MAX_CONNECTIONS", "0"),
        ("BROKER_HEADER_TIMEOUT", "0"), ("BROKER_IDLE_TIMEOUT", "soon"), ("BROKER_LOG_FORMAT", "xml"),
        ("BROKER_ACCESS_LOG", "maybe"), ("BROKER_SHUTDOWN_GRACE", "-3"), ("BROKER_MAX_BODY_BYTES", "1e9"),
        ("BROKER_UPSTREAM_MAX_BYTES", "1023"), ("BROKER_UPSTREAM_MAX_BYTES", "67108865"), ("BROKER_UPSTREAM_MAX_BYTES", "1MiB"),
        ("BROKER_UPSTREAM_MAX_BYTES", "-1"),
        ("BROKER_METRICS_ADDR", "9090"), ("BROKER_METRICS_ADDR", "localhost:9090"), ("BROKER_METRICS_ADDR", "::1:9090"),
        ("BROKER_METRICS_ADDR", "127.0.0.1:70000"), ("BROKER_METRICS_ADDR", "127.0.0.1:"), ("BROKER_METRICS_ADDR", "[127.0.0.1]:9090"),
        ("BROKER_METRICS_ADDR", "127.0.0.1:8080"),
        ("BROKER_PAGE_ACCENT", "0b57d0"), ("BROKER_PAGE_ACCENT", "#0b57d"), ("BROKER_PAGE_ACCENT", "#0b57dz"),
        ("BROKER_PAGE_ACCENT", "blue"), ("BROKER_PAGE_ACCENT", "#0b57d0;}"), ("BROKER_PAGE_TITLE", "a\u{1B}[31m"),
        ("BROKER_PAGE_TITLE", "line\nbreak"), ("BROKER_PAGE_TITLE", String(repeating: "x", count: 81)), ("BROKER_PAGE_TITLE", "   "),
    ])
    func rejectsBadValuesNamingTheVariable(variable: String, value: String) {
        #expect(throws: ConfigurationError.self) {
            try BrokerConfiguration.from(environment: [variable: value])
        }
        do {
            _ = try BrokerConfiguration.from(environment: [variable: value])
        } catch {
            #expect(error.variable == variable)
            #expect(error.description.hasPrefix(variable + ":"))
        }
    }
}
