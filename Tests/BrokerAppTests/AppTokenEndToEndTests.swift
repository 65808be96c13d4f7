import BrokerCore
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// `GET /app-token` against the fake provider's client credentials grant: caching until the margin, single flight,
/// bad client credentials, access, and the machine-to-machine entry on `/providers` and the connect page.
@Suite(.scoped) struct AppTokenEndToEndTests {
    static let clientSecret = "ACME-CLIENT-SECRET-SENTINEL-apptokens"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    struct Setup {
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness
        let clock: TestClock

        /// `GET /app-token?…` with the API key, in process.
        func appToken(_ query: String, headers: [(String, String)] = AppTokenEndToEndTests.api) async -> Response {
            await broker.respond(.GET, "/app-token?" + query, headers: headers)
        }
    }

    /// A broker on an injected clock with `acme-app` (machine to machine) and `acme` (sign-in and app tokens) at one fake;
    /// the broker's copy of the client secret is `brokerSecret`.
    static func setUp(
        lifetime: Int = 3600, brokerSecret: String = clientSecret,
        configure: @Sendable (inout FakeOAuth2Provider.Behaviour) -> Void = { _ in }
    ) throws -> Setup {
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: clientSecret)
        configuration.clientCredentials = true
        let provider = try FakeOAuth2Provider.scoped(configuration)
        provider.set { behaviour in
            behaviour.accessTokenLifetime = lifetime
            configure(&behaviour)
        }
        let clock = TestClock(Date())
        let entries = [
            provider.appTokenEntry(), provider.providerEntry(extra: "\"grant\": [\"authorization_code\", \"client_credentials\"]"),
        ]
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(entries.joined(separator: ", "))}}",
            environment: ["FAKE_ACME_SECRET": brokerSecret, "BROKER_REFRESH_INTERVAL": "0", "BROKER_UPSTREAM_TIMEOUT": "120"],
            now: { clock.now }, listen: false)
        return Setup(provider: provider, broker: broker, clock: clock)
    }

    static func text(_ response: Response) -> String { String(decoding: response.body, as: UTF8.self) }

    static func json(_ response: Response) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    @Test func repeatedRequestsWithinTheLifetimeCauseOneProviderCall() async throws {
        let s = try Self.setUp()
        var tokens: Set<String> = []
        let issued = s.clock.now
        for _ in 0..<5 {
            let reply = await s.appToken("provider=acme-app")
            #expect(reply.status.code == 200)
            #expect(reply.headers["Cache-Control"] == "no-store")
            #expect(reply.headers["Pragma"] == "no-cache")
            let body = Self.json(reply)
            tokens.insert(body["access_token"] as? String ?? "")
            #expect(body["provider"] as? String == "acme-app")
            #expect(body["token_type"] as? String == "bearer")
            #expect(body["expires_at"] as? String == RFC3339Date.format(issued.addingTimeInterval(3600)))
            #expect(body["refresh_token"] == nil)
            s.clock.advance(60)
        }
        #expect(tokens == ["ACME-ACCESS-SENTINEL-1"])
        #expect(s.provider.clientCredentialsCalls == 1)
        #expect(s.provider.ledger.clientCredentialsScopes == [nil])
        let metrics = Self.text(await s.broker.respond(.GET, "/metrics"))
        #expect(metrics.contains("broker_app_token_fetches_total{provider=\"acme-app\",outcome=\"issued\"} 1\n"))
        #expect(metrics.contains("broker_app_token_fetches_total{provider=\"acme\",outcome=\"issued\"} 0\n"))
        let log = s.broker.log
        #expect(log.contains("\"msg\":\"app token fetched\",\"provider\":\"acme-app\""))
        #expect(!log.contains("SENTINEL"))
    }

    @Test func aShortLivedTokenIsReusedForHalfItsLifeThenFetchedAnew() async throws {
        // 300 s against the default 300 s margin: the margin shrinks to half the lifetime, 150 s.
        let s = try Self.setUp(lifetime: 300)
        #expect(Self.json(await s.appToken("provider=acme-app"))["access_token"] as? String == "ACME-ACCESS-SENTINEL-1")
        for _ in 0..<10 {
            s.clock.advance(14)
            #expect(Self.json(await s.appToken("provider=acme-app"))["access_token"] as? String == "ACME-ACCESS-SENTINEL-1")
        }
        #expect(s.provider.clientCredentialsCalls == 1)
        s.clock.advance(10)  // 150 s after issue: 150 s left, inside the margin
        #expect(Self.json(await s.appToken("provider=acme-app"))["access_token"] as? String == "ACME-ACCESS-SENTINEL-2")
        #expect(Self.json(await s.appToken("provider=acme-app"))["access_token"] as? String == "ACME-ACCESS-SENTINEL-2")
        #expect(s.provider.clientCredentialsCalls == 2)
    }

    @Test func concurrentRequestsMakeOneProviderCall() async throws {
        let s = try Self.setUp { $0.clientCredentialsDelay = 0.3 }
        let bodies = await withTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { Self.text(await s.appToken("provider=acme-app&scope=read")) } }
            var all: [String] = []
            for await body in group { all.append(body) }
            return all
        }
        #expect(bodies.allSatisfy { $0.contains("\"access_token\":\"ACME-ACCESS-SENTINEL-1\"") })
        #expect(s.provider.clientCredentialsCalls == 1)
    }

    @Test func equalScopeSetsShareOneTokenAndOthersGetTheirOwn() async throws {
        let s = try Self.setUp()
        let first = Self.json(await s.appToken("provider=acme-app&scope=write%20read%20read"))
        #expect(first["scope"] as? String == "read write")
        let same = Self.json(await s.appToken("provider=acme-app&scope=read+write"))
        #expect(same["access_token"] as? String == first["access_token"] as? String)
        let other = Self.json(await s.appToken("provider=acme-app&scope=read"))
        #expect(other["access_token"] as? String != first["access_token"] as? String)
        #expect(s.provider.ledger.clientCredentialsScopes == ["read write", "read"])
        let bad = await s.appToken("provider=acme-app&scope=read%22")
        #expect(bad.status.code == 400)
        #expect(Self.json(bad)["error"] as? String == "bad_request")
        let long = await s.appToken("provider=acme-app&scope=" + String(repeating: "a", count: 1025))
        #expect(long.status.code == 400)
        #expect(s.provider.clientCredentialsCalls == 2)
    }

    @Test func wrongClientCredentialsGiveAClearErrorWithoutTheSecretAndBackOff() async throws {
        let wrong = "WRONG-CLIENT-SECRET-SENTINEL-0123456789"
        let s = try Self.setUp(brokerSecret: wrong)
        let reply = await s.appToken("provider=acme-app")
        #expect(reply.status.code == 502)
        let body = Self.text(reply)
        #expect(Self.json(reply)["error"] as? String == "upstream_error")
        #expect(body.contains("client credentials grant"))
        #expect(body.contains("invalid_client"))
        #expect(reply.headers["Retry-After"] == "10")
        for secret in [wrong, Self.clientSecret] {
            #expect(!body.contains(secret))
            #expect(!s.broker.log.contains(secret))
        }
        #expect(s.broker.log.contains("\"msg\":\"app token fetch failed\",\"provider\":\"acme-app\""))
        // While it backs off, the provider is not asked again.
        #expect((await s.appToken("provider=acme-app")).status.code == 502)
        #expect(s.provider.tokenCalls == 1)
        let metrics = Self.text(await s.broker.respond(.GET, "/metrics"))
        #expect(metrics.contains("broker_app_token_fetches_total{provider=\"acme-app\",outcome=\"upstream_error\"} 1\n"))
    }

    @Test func aFailedFetchStillHandsOutTheUnexpiredTokenAndHonoursRetryAfter() async throws {
        let s = try Self.setUp(lifetime: 600)
        #expect(Self.json(await s.appToken("provider=acme-app"))["access_token"] as? String == "ACME-ACCESS-SENTINEL-1")
        s.provider.set { $0.clientCredentialsFailure = .rateLimited(retryAfter: "120") }
        s.clock.advance(400)  // inside the margin, not expired
        #expect(Self.json(await s.appToken("provider=acme-app"))["access_token"] as? String == "ACME-ACCESS-SENTINEL-1")
        #expect(s.provider.clientCredentialsCalls == 2)
        s.clock.advance(100)  // still backing off (120 s asked): the cached token, no call
        #expect(Self.json(await s.appToken("provider=acme-app"))["access_token"] as? String == "ACME-ACCESS-SENTINEL-1")
        #expect(s.provider.clientCredentialsCalls == 2)
        s.clock.advance(150)  // the backoff ended and the token expired: one more try, and its error
        let limited = await s.appToken("provider=acme-app")
        #expect(limited.status.code == 502)
        #expect(limited.headers["Retry-After"] == "120")
        #expect((await s.appToken("provider=acme-app")).status.code == 502)
        #expect(s.provider.clientCredentialsCalls == 3)
    }

    @Test func theAPIKeyIsRequiredAndProvidersAreChecked() async throws {
        let s = try Self.setUp()
        #expect((await s.appToken("provider=acme-app", headers: [])).status.code == 401)
        let wrong = await s.appToken("provider=acme-app", headers: [("Authorization", "Bearer wrong-key-0123456789")])
        #expect(wrong.status.code == 401)
        #expect(wrong.headers["WWW-Authenticate"] != nil)
        #expect((await s.appToken("")).status.code == 400)
        let unknown = await s.appToken("provider=nope")
        #expect(unknown.status.code == 404)
        #expect(Self.json(unknown)["error"] as? String == "unknown_provider")
        let noGrant = await s.appToken("provider=github")
        #expect(noGrant.status.code == 400)
        #expect(Self.text(noGrant).contains("client credentials grant"))
        #expect(s.provider.tokenCalls == 0)
        // The provider with both grants gives app tokens too.
        #expect((await s.appToken("provider=acme")).status.code == 200)
    }

    @Test func aMachineToMachineEntryIsListedWithItsGrantButOffersNoSignIn() async throws {
        let s = try Self.setUp()
        let providers = Self.json(await s.broker.respond(.GET, "/providers"))["providers"] as? [[String: Any]] ?? []
        let app = try #require(providers.first { $0["name"] as? String == "acme-app" })
        #expect(app["configured"] as? Bool == true)
        #expect(app["grants"] as? [String] == ["client_credentials"])
        let both = try #require(providers.first { $0["name"] as? String == "acme" })
        #expect(both["grants"] as? [String] == ["authorization_code", "client_credentials"])
        let github = try #require(providers.first { $0["name"] as? String == "github" })
        #expect(github["grants"] as? [String] == ["authorization_code"])
        let page = Self.text(await s.broker.respond(.GET, "/", headers: [("Accept", "text/html")]))
        #expect(page.contains("Connect acme"))
        #expect(!page.contains("acme-app"))
        let start = await s.broker.respond(.GET, "/authorize?provider=acme-app", headers: [("Accept", "application/json")])
        #expect(start.status.code == 400)
        #expect(Self.text(start).contains("app tokens only"))
        #expect(s.provider.ledger.authorizeCalls == 0)
    }
}
