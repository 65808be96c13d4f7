import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerApp

/// Refresh before expiry end to end: real sockets to the broker and to an in-process OAuth 2.0 provider;
/// across replicas, two broker processes on one real `redis-server`.
@Suite(.scoped) struct RefreshEndToEndTests {
    static let clientSecret = "ACME-CLIENT-SECRET-SENTINEL-0123456789"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
    static let accountPath = "/account?id=acme:4242"

    struct Setup {
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness
        let clock: TestClock
        var browser: Browser { Browser(brokerPort: broker.port, providerPort: provider.port) }
        func advance(_ seconds: TimeInterval) { clock.advance(seconds) }
        func read() async -> TestHTTP.Reply? { await TestHTTP.send(port: broker.port, target: accountPath, headers: api) }
    }

    /// A broker on an injected clock with the background refresher off unless `interval` is given.
    static func setUp(
        interval: String = "0", environment: [String: String] = [:],
        configure: @Sendable (inout FakeOAuth2Provider.Behaviour) -> Void = { _ in }
    ) async throws -> Setup {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: clientSecret))
        provider.set(configure)
        let clock = TestClock(Date())
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry)}}",
            environment: ["FAKE_ACME_SECRET": clientSecret, "BROKER_REFRESH_INTERVAL": interval].merging(environment) { $1 },
            now: { clock.now })
        let setup = Setup(provider: provider, broker: broker, clock: clock)
        let connected = await setup.browser.connect(provider: "acme")
        #expect(connected?.status == 200)
        return setup
    }

    static func field(_ body: String, _ name: String) -> String? {
        guard let range = body.range(of: "\"\(name)\":") else { return nil }
        let rest = body[range.upperBound...]
        if rest.hasPrefix("\"") { return String(rest.dropFirst().prefix { $0 != "\"" }) }
        return String(rest.prefix { $0 != "," && $0 != "}" })
    }

    static func metric(_ text: String, _ series: String) -> Int? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    @Test func aReadNearExpiryRefreshesFirstAndReturnsTheNewToken() async throws {
        let s = try await Self.setUp()
        let first = try #require(await s.read())
        #expect(first.status == 200)
        #expect(Self.field(first.body, "access_token") == "ACME-ACCESS-SENTINEL-2")
        #expect(Self.field(first.body, "refreshed_at") == "null")
        #expect(s.provider.refreshCalls == 0)
        s.advance(3400)
        let second = try #require(await s.read())
        #expect(second.status == 200)
        #expect(Self.field(second.body, "access_token") == "ACME-ACCESS-SENTINEL-3")
        #expect(Self.field(second.body, "status") == "active")
        let now = s.clock.now
        #expect(Self.field(second.body, "refreshed_at") == RFC3339Date.format(now))
        #expect(Self.field(second.body, "expires_at") == RFC3339Date.format(now.addingTimeInterval(3600)))
        #expect(!second.body.contains("REFRESH-SENTINEL"))
        #expect(s.provider.refreshCalls == 1)
        let list = try #require(await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: Self.api))
        #expect(Self.field(list.body, "refreshed_at") == RFC3339Date.format(now))
        #expect(Self.field(list.body, "status") == "active")
        #expect(!list.body.contains("SENTINEL"))
        let metrics = try #require(await TestHTTP.send(port: s.broker.port, target: "/metrics")).body
        #expect(Self.metric(metrics, "broker_refresh_attempts_total{provider=\"acme\"}") == 1)
        #expect(Self.metric(metrics, "broker_refresh_failures_total{provider=\"acme\",reason=\"transient\"}") == 0)
        let log = s.broker.log
        #expect(log.contains("\"msg\":\"token refreshed\",\"provider\":\"acme\",\"account\":\"acme:4242\""))
        #expect(!log.contains("SENTINEL"))
    }

    @Test func twentyConcurrentReadersCauseOneRefreshAndTheRotatedTokenIsUsedNext() async throws {
        let s = try await Self.setUp { $0.refreshDelay = 0.3 }
        s.advance(3500)
        let port = s.broker.port
        let replies = await withTaskGroup(of: TestHTTP.Reply?.self) { group in
            for _ in 0..<20 { group.addTask { await TestHTTP.send(port: port, target: Self.accountPath, headers: Self.api) } }
            var all: [TestHTTP.Reply?] = []
            for await reply in group { all.append(reply) }
            return all
        }
        #expect(replies.map { $0?.status } == Array(repeating: 200, count: 20))
        #expect(Set(replies.map { $0.flatMap { Self.field($0.body, "access_token") } }) == ["ACME-ACCESS-SENTINEL-3"])
        #expect(s.provider.refreshCalls == 1)
        // The next refresh presents the rotated token; the provider never sees a used one.
        s.advance(3500)
        #expect(Self.field(try #require(await s.read()).body, "access_token") == "ACME-ACCESS-SENTINEL-4")
        #expect(s.provider.refreshCalls == 2)
        #expect(s.provider.ledger.stalePresentations == 0)
    }

    @Test func aDeadRefreshTokenAnswers410ReauthorizationRequired() async throws {
        let s = try await Self.setUp { $0.refreshFailure = .invalidGrant }
        s.advance(3500)
        let reply = try #require(await s.read())
        #expect(reply.status == 410)
        #expect(reply.body.contains("\"error\":\"reauthorization_required\""))
        #expect(try #require(await s.read()).status == 410)
        #expect(s.provider.refreshCalls == 1)
        let list = try #require(await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: Self.api))
        #expect(Self.field(list.body, "status") == "reauthorization_required")
        let metrics = try #require(await TestHTTP.send(port: s.broker.port, target: "/metrics")).body
        #expect(Self.metric(metrics, "broker_refresh_failures_total{provider=\"acme\",reason=\"invalid_grant\"}") == 1)
        #expect(
            s.broker.log.contains("\"msg\":\"refresh failed\",\"provider\":\"acme\",\"account\":\"acme:4242\",\"reason\":\"invalid_grant\"")
        )
        // Authorizing again makes the account usable.
        s.provider.set { $0.refreshFailure = nil }
        #expect(await s.browser.connect(provider: "acme")?.status == 200)
        #expect(try #require(await s.read()).status == 200)
    }

    @Test func aTransientFailureKeepsTheTokenWhileValidThenAnswers502UntilTheProviderRecovers() async throws {
        let s = try await Self.setUp { $0.refreshFailure = .serverError }
        s.advance(3400)
        let kept = try #require(await s.read())
        #expect(kept.status == 200)
        #expect(Self.field(kept.body, "access_token") == "ACME-ACCESS-SENTINEL-2")
        s.advance(201)
        let failed = try #require(await s.read())
        #expect(failed.status == 502)
        #expect(failed.body.contains("\"error\":\"upstream_error\""))
        #expect(!failed.body.contains("SENTINEL"))
        let metrics = try #require(await TestHTTP.send(port: s.broker.port, target: "/metrics")).body
        #expect(Self.metric(metrics, "broker_refresh_failures_total{provider=\"acme\",reason=\"transient\"}") == 2)
        // The second failure in a row backs off 20 s, raised to the 30 s cooldown, and the answer says so (RFC 9110 §10.2.3).
        #expect(failed.header("Retry-After") == "30")
        s.provider.set { $0.refreshFailure = nil }
        s.advance(30)
        let recovered = try #require(await s.read())
        #expect(recovered.status == 200)
        #expect(Self.field(recovered.body, "access_token") == "ACME-ACCESS-SENTINEL-3")
        #expect(!s.broker.log.contains("SENTINEL"))
    }

    @Test func aRateLimitedRefreshHoldsReadsOfTheExpiredTokenUntilRetryAfterPasses() async throws {
        let s = try await Self.setUp { $0.refreshFailure = .rateLimited(retryAfter: "120") }
        s.advance(3601)
        let first = try #require(await s.read())
        #expect(first.status == 502)
        #expect(first.body.contains("\"error\":\"upstream_error\"") && first.body.contains("HTTP 429"))
        #expect(first.header("Retry-After") == "120")
        s.advance(90)
        let held = try #require(await s.read())
        #expect(held.status == 502 && held.body == first.body)
        #expect(held.header("Retry-After") == "30")
        #expect(s.provider.refreshCalls == 1)
        s.provider.set { $0.refreshFailure = nil }
        s.advance(30)
        let recovered = try #require(await s.read())
        #expect(recovered.status == 200 && recovered.header("Retry-After") == nil)
        #expect(s.provider.refreshCalls == 2)
    }

    @Test func withoutARefreshTokenAnExpiredAccountIs410ExpiredAsBefore() async throws {
        let s = try await Self.setUp { $0.refreshTokens = .none }
        s.advance(3601)
        let reply = try #require(await s.read())
        #expect(reply.status == 410)
        #expect(reply.body.contains("\"error\":\"expired\""))
        let list = try #require(await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: Self.api))
        #expect(Self.field(list.body, "status") == "expired")
        #expect(s.provider.refreshCalls == 0)
    }

    @Test func theBackgroundRefresherRenewsAnAccountNobodyReads() async throws {
        let s = try await Self.setUp(interval: "0.05") { $0.accessTokenLifetime = 100 }
        // 40 s left of 100: within the margin, which is at most half the token's life.
        s.advance(60)
        #expect(await eventually { s.provider.refreshCalls >= 1 })
        let reply = try #require(await s.read())
        #expect(Self.field(reply.body, "access_token") == "ACME-ACCESS-SENTINEL-3")
        #expect(s.provider.refreshCalls == 1)
    }

    @Test func refreshSettingsComeFromTheEnvironmentAndBadValuesNameTheVariable() throws {
        let defaults = try BrokerConfiguration.from(environment: [:])
        #expect(defaults.refreshMargin == 300 && defaults.refreshInterval == 60)
        let set = try BrokerConfiguration.from(environment: ["BROKER_REFRESH_MARGIN": "0", "BROKER_REFRESH_INTERVAL": "0"])
        #expect(set.refreshMargin == 0 && set.refreshInterval == 0)
        for variable in ["BROKER_REFRESH_MARGIN", "BROKER_REFRESH_INTERVAL"] {
            for bad in ["-1", "soon", "86401", "nan"] {
                #expect(throws: ConfigurationError.self) { try BrokerConfiguration.from(environment: [variable: bad]) }
                do {
                    _ = try BrokerConfiguration.from(environment: [variable: bad])
                } catch {
                    #expect(error.variable == variable)
                }
            }
        }
    }

    @Test func twentyReadersOnTwoReplicasCauseOneRefreshAndTheRotatedTokenIsStored() async throws {
        let redis = try await RedisServer.scoped()
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: Self.clientSecret))
        // A 2-second token is due with half its life left (the margin is never more than half the lifetime); the
        // refreshed token, an hour long, is not. The slow refresh lets all 20 pile up.
        provider.set {
            $0.accessTokenLifetime = 2
            $0.refreshDelay = 0.5
        }
        let root = try TemporaryDirectory.scoped(prefix: "broker-refresh-replicas")
        let providers = root + "/providers.json"
        try Data("{\"providers\": {\(provider.providerEntry)}}".utf8).write(to: URL(fileURLWithPath: providers))
        let key = "k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
        func environment(_ name: String) -> [String: String] {
            [
                "BROKER_DATA_DIR": root + "/" + name, "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
                "BROKER_PROVIDERS_FILE": providers, "FAKE_ACME_SECRET": Self.clientSecret, "BROKER_API_KEY": BrokerHarness.apiKey,
                "BROKER_SECRET": "shared-cookie-secret-shared-cookie-secret", "BROKER_ENCRYPTION_KEY": key,
                "BROKER_UPSTREAM_TIMEOUT": "120", "BROKER_REFRESH_MARGIN": "300", "BROKER_REFRESH_INTERVAL": "0",
            ]
        }
        let a = try await BrokerProcess.start(environment: environment("a"))
        let b = try await BrokerProcess.start(environment: environment("b"))
        let browser = Browser(brokerPort: a.port, providerPort: provider.port)
        #expect(await browser.connect(provider: "acme")?.status == 200)
        let original = provider.accessTokens.last
        // The brokers run on the real clock in processes of their own: let the token enter its margin.
        try await Task.sleep(for: .seconds(1.1))
        let ports = [a.port, b.port]
        let replies = await withTaskGroup(of: TestHTTP.Reply?.self) { group in
            for i in 0..<20 {
                group.addTask { await TestHTTP.send(port: ports[i % 2], target: Self.accountPath, headers: Self.api) }
            }
            var all: [TestHTTP.Reply?] = []
            for await reply in group { all.append(reply) }
            return all
        }
        #expect(replies.map { $0?.status } == Array(repeating: 200, count: 20))
        let tokens = Set(replies.map { $0.flatMap { Self.field($0.body, "access_token") } })
        #expect(tokens.count == 1)
        #expect(tokens.first != original)
        #expect(provider.refreshCalls == 1)
        #expect(provider.ledger.stalePresentations == 0)
        var attempts = 0
        for port in ports {
            let metrics = await TestHTTP.send(port: port, target: "/metrics")?.body ?? ""
            attempts += Self.metric(metrics, "broker_refresh_attempts_total{provider=\"acme\"}") ?? 0
        }
        #expect(attempts == 1)
        // What Redis holds is the rotated refresh token: revocation at deletion presents it.
        let deleted = await TestHTTP.send(port: b.port, method: "DELETE", target: Self.accountPath, headers: Self.api)
        #expect(deleted?.status == 204)
        #expect(provider.ledger.revoked == [provider.ledger.currentRefreshToken ?? "-"])
        #expect(!(a.log + b.log).contains("SENTINEL"))
        a.signal(SIGTERM)
        b.signal(SIGTERM)
        _ = await a.waitForExit(timeout: 60)
        _ = await b.waitForExit(timeout: 60)
    }

    @Test func concurrentForcedRefreshesOnTwoReplicasCallTheProviderOnceAndEveryCallerGetsTheNewToken() async throws {
        let redis = try await RedisServer.scoped()
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: Self.clientSecret))
        // Not due (an hour left): only the forced refresh calls the provider. The slow answer lets all 20 pile up.
        provider.set { $0.refreshDelay = 0.5 }
        let root = try TemporaryDirectory.scoped(prefix: "broker-forced-refresh-replicas")
        let providers = root + "/providers.json"
        try Data("{\"providers\": {\(provider.providerEntry)}}".utf8).write(to: URL(fileURLWithPath: providers))
        let key = "k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
        func environment(_ name: String) -> [String: String] {
            [
                "BROKER_DATA_DIR": root + "/" + name, "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
                "BROKER_PROVIDERS_FILE": providers, "FAKE_ACME_SECRET": Self.clientSecret, "BROKER_API_KEY": BrokerHarness.apiKey,
                "BROKER_SECRET": "shared-cookie-secret-shared-cookie-secret", "BROKER_ENCRYPTION_KEY": key,
                "BROKER_UPSTREAM_TIMEOUT": "120", "BROKER_REFRESH_INTERVAL": "0",
            ]
        }
        let a = try await BrokerProcess.start(environment: environment("a"))
        let b = try await BrokerProcess.start(environment: environment("b"))
        let browser = Browser(brokerPort: a.port, providerPort: provider.port)
        #expect(await browser.connect(provider: "acme")?.status == 200)
        let original = provider.accessTokens.last
        let ports = [a.port, b.port]
        let target = "/account/refresh?id=acme:4242"
        let replies = await withTaskGroup(of: TestHTTP.Reply?.self) { group in
            for i in 0..<20 {
                group.addTask { await TestHTTP.send(port: ports[i % 2], method: "POST", target: target, headers: Self.api) }
            }
            var all: [TestHTTP.Reply?] = []
            for await reply in group { all.append(reply) }
            return all
        }
        #expect(replies.map { $0?.status } == Array(repeating: 200, count: 20))
        let tokens = Set(replies.map { $0.flatMap { Self.field($0.body, "access_token") } })
        #expect(tokens.count == 1)
        #expect(tokens.first != original && tokens.first == provider.accessTokens.last)
        #expect(provider.refreshCalls == 1)
        #expect(provider.ledger.stalePresentations == 0)
        // Asked again on either replica within ten seconds: that refresh's token, and still one provider call.
        for port in ports {
            let again = await TestHTTP.send(port: port, method: "POST", target: target, headers: Self.api)
            #expect(again?.status == 200)
            #expect(again.flatMap { Self.field($0.body, "access_token") } == tokens.first ?? "-")
        }
        #expect(provider.refreshCalls == 1)
        #expect(!(a.log + b.log).contains("SENTINEL"))
        a.signal(SIGTERM)
        b.signal(SIGTERM)
        _ = await a.waitForExit(timeout: 60)
        _ = await b.waitForExit(timeout: 60)
    }
}
