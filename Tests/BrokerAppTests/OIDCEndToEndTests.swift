import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// OpenID Connect end to end: a providers-file entry of `"kind": "oidc"` and an issuer alone, against the fake
/// provider serving a discovery document and ID tokens over real sockets.
@Suite(.scoped) struct OIDCEndToEndTests {
    static let clientSecret = "OIDC-CLIENT-SECRET-SENTINEL-0123456789"

    struct Setup {
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness
        var browser: Browser { Browser(brokerPort: broker.port, providerPort: provider.port) }

        /// The `/providers` item of `acme`.
        func listed() async -> [String: Any]? {
            guard let reply = await TestHTTP.send(port: broker.port, target: "/providers"),
                let object = try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any],
                let items = object["providers"] as? [[String: Any]]
            else { return nil }
            return items.first { $0["name"] as? String == "acme" }
        }

        /// Whether `/providers` lists `acme` as available.
        func available() async -> Bool { await listed()?["available"] as? Bool == true }
    }

    /// A fake OpenID provider and a broker whose providers file names only its issuer; `configure` runs before the broker starts.
    static func setUp(
        configure: @Sendable (inout FakeOAuth2Provider.Behaviour) -> Void = { _ in },
        waitForDiscovery: Bool = true
    ) async throws -> Setup {
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: clientSecret)
        configuration.openID = true
        configuration.quirks.clientAuthentication = .basic
        configuration.pkce = .required
        let provider = try FakeOAuth2Provider.scoped(configuration)
        provider.set(configure)
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.oidcProviderEntry())}}", environment: ["FAKE_ACME_SECRET": clientSecret])
        let setup = Setup(provider: provider, broker: broker)
        // Bounded generously: under a loaded machine URLSession's shared work queue can hold a first fetch for seconds.
        if waitForDiscovery { #expect(await eventually(timeout: 60) { await setup.available() }) }
        return setup
    }

    @Test func aSignInThroughAnIssuerAloneStoresTheAccountOfTheIDTokensSub() async throws {
        let s = try await Self.setUp()
        let listed = try #require(await s.listed())
        #expect(listed["kind"] as? String == "oidc")
        #expect(listed["reason"] is NSNull)
        let browser = s.browser
        let start = try #require(await browser.authorize("provider=acme"))
        #expect(start.status == 302)
        let location = try #require(start.header("Location"))
        #expect(location.hasPrefix(s.provider.baseURL + "/authorize?"))
        let query = URLComponents(string: location)?.queryItems ?? []
        #expect(query.first { $0.name == "scope" }?.value == "openid email profile")
        #expect(query.first { $0.name == "nonce" }?.value?.utf8.count == 43)
        // The document offers S256, and the fake requires it: the broker sends a challenge.
        #expect(query.first { $0.name == "code_challenge_method" }?.value == "S256")
        let callback = try #require(await browser.visitProvider(location))
        let done = try #require(await browser.get(callback))
        #expect(done.status == 200)
        #expect(done.body.contains("\"id\":\"acme:4242\""))
        #expect(done.body.contains("\"screen_name\":\"ada\""))
        // The document lists only client_secret_basic, and the fake refuses anything else.
        #expect(s.provider.ledger.violations == [])
        #expect(s.provider.ledger.userCalls == 0)
        let read = try #require(
            await TestHTTP.send(
                port: s.broker.port, target: "/account?id=acme:4242", headers: [("Authorization", "Bearer " + BrokerHarness.apiKey)]))
        #expect(read.status == 200)
        #expect(read.body.contains("ACME-ACCESS-SENTINEL"))
        #expect(!s.broker.log.contains("SENTINEL"))
        #expect(!s.broker.dataDirectoryText().contains(try #require(query.first { $0.name == "nonce" }?.value)))
    }

    @Test(arguments: FakeOAuth2Provider.IDTokenFault.allCases)
    func aWrongIDTokenIsRefusedAndNothingIsStored(fault: FakeOAuth2Provider.IDTokenFault) async throws {
        let s = try await Self.setUp { $0.idTokenFault = fault }
        let reply = try #require(await s.browser.connect(provider: "acme"))
        #expect(reply.status == 502)
        #expect(reply.body.contains("\"error\":\"upstream_error\""))
        #expect(reply.body.contains("id_token"))
        #expect(s.provider.ledger.exchanges == 1)
        let list = try #require(
            await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: [("Authorization", "Bearer " + BrokerHarness.apiKey)]))
        #expect(list.body == "{\"accounts\":[],\"next_cursor\":null}")
        let log = s.broker.log
        #expect(log.contains("\"msg\":\"callback failed\""))
        #expect(!log.contains("SENTINEL"))
        #expect(!log.contains("eyJ"))
    }

    @Test func anUnreachableIssuerLeavesTheBrokerReadyAndTheProviderUnavailableUntilItAnswers() async throws {
        let s = try await Self.setUp(configure: { $0.discoveryDown = true }, waitForDiscovery: false)
        #expect(await eventually(timeout: 60) { (await s.listed()?["reason"] as? String)?.hasPrefix("discovery failed: ") == true })
        let listed = try #require(await s.listed())
        #expect(listed["configured"] as? Bool == true)
        #expect(listed["available"] as? Bool == false)
        #expect(listed["reason"] as? String == "discovery failed: HTTP 503 (not a 2xx status)")
        #expect(try #require(await TestHTTP.send(port: s.broker.port, target: "/readyz")).status == 200)
        let refused = try #require(await s.browser.authorize("provider=acme"))
        #expect(refused.status == 503)
        #expect(refused.body.contains("\"error\":\"provider_unavailable\""))
        #expect(s.provider.ledger.authorizeCalls == 0)
        s.provider.set { $0.discoveryDown = false }
        #expect(await eventually(timeout: 60) { await s.available() })
        #expect(try #require(await s.listed())["reason"] is NSNull)
        #expect(try #require(await s.browser.connect(provider: "acme")).status == 200)
        #expect(s.provider.ledger.discoveryCalls >= 2)
        #expect(s.broker.log.contains("\"msg\":\"oidc discovery failed\""))
        #expect(s.broker.log.contains("\"msg\":\"oidc discovery loaded\""))
    }

    @Test func anUnconfiguredOpenIDPresetFetchesNothing() async throws {
        // Google is an OpenID preset; without GOOGLE_CLIENT_ID it is listed, unavailable for want of settings, and never asked.
        let s = try await Self.setUp()
        #expect(s.broker.broker.configuration.providers.first { $0.name == "google" }?.isConfigured == false)
        #expect(s.broker.broker.discovery.registry.discovery.providers == ["acme"])
        let reply = try #require(await TestHTTP.send(port: s.broker.port, target: "/providers"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any])
        let google = try #require((object["providers"] as? [[String: Any]])?.first { $0["name"] as? String == "google" })
        #expect(google["kind"] as? String == "oidc")
        #expect(google["configured"] as? Bool == false)
        #expect(google["available"] as? Bool == false)
        #expect(google["reason"] is NSNull)
    }
}
