import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// `POST /account/refresh`: a back end (API key) or the owning browser renews a token now, due or not, within the refresh
/// backoff; a second ask within ten seconds gets the first one's token.
@Suite(.scoped) struct AccountRefreshRouteTests {
    typealias Setup = RefreshEndToEndTests.Setup
    static let api = RefreshEndToEndTests.api

    static func refresh(
        _ s: Setup, _ target: String = "/account/refresh?id=acme:4242",
        headers: [(String, String)] = api
    ) async -> TestHTTP.Reply? {
        await TestHTTP.send(port: s.broker.port, method: "POST", target: target, headers: headers)
    }

    static func error(_ reply: TestHTTP.Reply) -> String? { RefreshEndToEndTests.field(reply.body, "error") }

    /// Runs `body` against a broker with one connected `acme` account, and stops the broker however `body` ends.
    static func withBroker(
        environment: [String: String] = [:],
        configure: @escaping @Sendable (inout FakeOAuth2Provider.Behaviour) -> Void = { _ in },
        _ body: (Setup) async throws -> Void
    ) async throws {
        let s = try await RefreshEndToEndTests.setUp(environment: environment, configure: configure)
        do {
            try await body(s)
        } catch {
            await s.broker.stop()
            throw error
        }
        await s.broker.stop()
    }

    @Test func aTokenThatIsNotDueIsRefreshedAndTheAnswerCarriesTheNewTokenNotTheRefreshToken() async throws {
        try await Self.withBroker { s in
            s.advance(60)
            let reply = try #require(await Self.refresh(s))
            #expect(reply.status == 200)
            #expect(reply.header("Cache-Control") == "no-store")
            #expect(RefreshEndToEndTests.field(reply.body, "id") == "acme:4242")
            #expect(RefreshEndToEndTests.field(reply.body, "access_token") == "ACME-ACCESS-SENTINEL-3")
            #expect(RefreshEndToEndTests.field(reply.body, "refreshed_at") == RFC3339Date.format(s.clock.now))
            #expect(RefreshEndToEndTests.field(reply.body, "expires_at") == RFC3339Date.format(s.clock.now.addingTimeInterval(3600)))
            #expect(!reply.body.contains("REFRESH-SENTINEL") && !reply.body.contains("refresh_token"))
            #expect(s.provider.refreshCalls == 1)
            // The next read hands out the new token, without another provider call.
            let read = try #require(await s.read())
            #expect(RefreshEndToEndTests.field(read.body, "access_token") == "ACME-ACCESS-SENTINEL-3")
            #expect(s.provider.refreshCalls == 1)
        }
    }

    @Test func aSecondForcedRefreshWithinTenSecondsGetsTheFirstOnesToken() async throws {
        try await Self.withBroker { s in
            #expect(try #require(await Self.refresh(s)).status == 200)
            // Stored times keep milliseconds: a second either side of the ten keeps the rounding out of it.
            s.advance(9)
            // The provider id and uid name the account as well as id does.
            let again = try #require(await Self.refresh(s, "/account/refresh?provider=acme&uid=4242"))
            #expect(again.status == 200)
            #expect(RefreshEndToEndTests.field(again.body, "access_token") == "ACME-ACCESS-SENTINEL-3")
            #expect(s.provider.refreshCalls == 1)
            s.advance(2)
            let later = try #require(await Self.refresh(s))
            #expect(RefreshEndToEndTests.field(later.body, "access_token") == "ACME-ACCESS-SENTINEL-4")
            #expect(s.provider.refreshCalls == 2)
        }
    }

    @Test func theAPIKeyMayRefreshAndNothingElseWithoutASession() async throws {
        try await Self.withBroker { s in
            let none = try #require(await Self.refresh(s, headers: []))
            #expect(none.status == 401 && none.header("WWW-Authenticate") == "Bearer realm=\"token-broker\"")
            let wrong = try #require(await Self.refresh(s, headers: [("Authorization", "Bearer not-the-key-0123456789")]))
            #expect(wrong.status == 401)
            #expect(s.provider.refreshCalls == 0)
            let get = try #require(await TestHTTP.send(port: s.broker.port, target: "/account/refresh?id=acme:4242", headers: Self.api))
            #expect(get.status == 405 && get.header("Allow")?.contains("POST") == true)
        }
    }

    @Test func theOwningBrowserMayRefreshFromAListedOriginOrWithTheConnectPagesToken() async throws {
        let origin = "https://app.example"
        try await Self.withBroker(environment: ["BROKER_CORS_ORIGINS": origin]) { s in
            let browser = s.browser
            #expect(await browser.connect(provider: "acme")?.status == 200)
            func post(_ target: String = "/account/refresh?id=acme:4242", extra: [(String, String)] = []) async throws -> TestHTTP.Reply {
                try #require(await TestHTTP.send(port: s.broker.port, method: "POST", target: target, headers: browser.jar.header + extra))
            }
            // The session alone is not enough: a form on another page could post it.
            let bare = try await post()
            #expect(bare.status == 403 && Self.error(bare) == "forbidden")
            let elsewhere = try await post(extra: [("Origin", "https://evil.example")])
            #expect(elsewhere.status == 403 && elsewhere.header("Access-Control-Allow-Origin") == nil)
            let forged = try await post("/account/refresh?id=acme:4242&csrf=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
            #expect(forged.status == 403)
            #expect(s.provider.refreshCalls == 0)
            // The broker's own origin (BROKER_PUBLIC_URL's): a same-origin page no other can forge.
            let own = try await post(extra: [("Origin", "http://localhost:8080")])
            #expect(own.status == 200 && own.header("Access-Control-Allow-Origin") == nil)
            #expect(s.provider.refreshCalls == 1)
            s.advance(11)
            // A listed front end's page, with credentials: the new token, readable by that page.
            let listed = try await post(extra: [("Origin", origin)])
            #expect(listed.status == 200 && listed.header("Access-Control-Allow-Origin") == origin)
            #expect(RefreshEndToEndTests.field(listed.body, "access_token")?.hasPrefix("ACME-ACCESS-SENTINEL-") == true)
            #expect(s.provider.refreshCalls == 2)
            // The connect page's anti-forgery token, as its forms send it.
            s.advance(11)
            let token = try #require(
                ConnectPageHandlersTests.csrf(in: try await ConnectPageHandlersTests.confirmation(browser, id: "acme:4242").body))
            let withToken = try #require(
                await TestHTTP.send(
                    port: s.broker.port, method: "POST", target: "/account/refresh?id=acme:4242",
                    headers: browser.jar.header + [("Content-Type", "application/x-www-form-urlencoded")], body: "csrf=" + token))
            #expect(withToken.status == 200)
            #expect(s.provider.refreshCalls == 3)
            // Another browser's session does not list the account: 401 whatever page it comes from.
            let stranger = Browser(brokerPort: s.broker.port, providerPort: s.provider.port)
            let refused = try #require(
                await TestHTTP.send(
                    port: s.broker.port, method: "POST", target: "/account/refresh?id=acme:4242",
                    headers: stranger.jar.header + [("Origin", origin)]))
            #expect(refused.status == 401)
            // The preflight of a listed origin allows the POST with credentials.
            let preflight = try #require(
                await TestHTTP.send(
                    port: s.broker.port, method: "OPTIONS", target: "/account/refresh?id=acme:4242",
                    headers: [("Origin", origin), ("Access-Control-Request-Method", "POST")]))
            #expect(preflight.status == 204 && preflight.header("Access-Control-Allow-Methods") == "POST")
            #expect(preflight.header("Access-Control-Allow-Credentials") == "true")
            #expect(s.provider.refreshCalls == 3)
        }
    }

    @Test func badRequestsAndUnknownAccountsAreRefused() async throws {
        try await Self.withBroker { s in
            let missing = try #require(await Self.refresh(s, "/account/refresh"))
            #expect(missing.status == 400 && Self.error(missing) == "bad_request")
            let unknown = try #require(await Self.refresh(s, "/account/refresh?id=acme:999"))
            #expect(unknown.status == 404 && Self.error(unknown) == "not_found")
            #expect(s.provider.refreshCalls == 0)
        }
    }

    @Test func anAccountWithoutARefreshTokenIs409NotRefreshable() async throws {
        try await Self.withBroker(configure: { $0.refreshTokens = .none }) { s in
            let reply = try #require(await Self.refresh(s))
            #expect(reply.status == 409 && Self.error(reply) == "not_refreshable")
            #expect(s.provider.refreshCalls == 0)
        }
    }

    @Test func aRejectedRefreshTokenIs410AndTheAccountNeedsReauthorization() async throws {
        try await Self.withBroker(configure: { $0.refreshFailure = .invalidGrant }) { s in
            let reply = try #require(await Self.refresh(s))
            #expect(reply.status == 410 && Self.error(reply) == "reauthorization_required")
            let again = try #require(await Self.refresh(s))
            #expect(again.status == 410 && Self.error(again) == "reauthorization_required")
            #expect(s.provider.refreshCalls == 1)
            #expect(try #require(await s.read()).status == 410)
        }
    }

    @Test func aRateLimitedRefreshAnswersRetryAfterAndTheNextAskKeepsToTheBackoff() async throws {
        try await Self.withBroker(configure: { $0.refreshFailure = .rateLimited(retryAfter: "120") }) { s in
            let first = try #require(await Self.refresh(s))
            #expect(first.status == 502 && Self.error(first) == "upstream_error")
            #expect(first.header("Retry-After") == "120")
            s.advance(30)
            let held = try #require(await Self.refresh(s))
            #expect(held.status == 502 && held.header("Retry-After") == "90")
            #expect(s.provider.refreshCalls == 1)
            // The token is still valid: readers keep getting it meanwhile.
            #expect(try #require(await s.read()).status == 200)
            s.advance(91)
            s.provider.set { $0.refreshFailure = nil }
            #expect(try #require(await Self.refresh(s)).status == 200)
            #expect(s.provider.refreshCalls == 2)
        }
    }
}
