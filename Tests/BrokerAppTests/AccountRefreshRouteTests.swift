import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// `POST /account/refresh`: an operator renews a token now, due or not, behind the API key, within the refresh backoff.
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
        configure: @escaping @Sendable (inout FakeOAuth2Provider.Behaviour) -> Void = { _ in },
        _ body: (Setup) async throws -> Void
    ) async throws {
        let s = try await RefreshEndToEndTests.setUp(configure: configure)
        do {
            try await body(s)
        } catch {
            await s.broker.stop()
            throw error
        }
        await s.broker.stop()
    }

    @Test func aTokenThatIsNotDueIsRefreshedAndTheSummaryCarriesNoSecret() async throws {
        try await Self.withBroker { s in
            s.advance(60)
            let reply = try #require(await Self.refresh(s))
            #expect(reply.status == 200)
            #expect(reply.header("Cache-Control") == "no-store")
            #expect(RefreshEndToEndTests.field(reply.body, "id") == "acme:4242")
            #expect(RefreshEndToEndTests.field(reply.body, "refreshed_at") == RFC3339Date.format(s.clock.now))
            #expect(RefreshEndToEndTests.field(reply.body, "expires_at") == RFC3339Date.format(s.clock.now.addingTimeInterval(3600)))
            #expect(!reply.body.contains("SENTINEL"))
            #expect(s.provider.refreshCalls == 1)
            // The next read hands out the new token, without another provider call.
            let read = try #require(await s.read())
            #expect(RefreshEndToEndTests.field(read.body, "access_token") == "ACME-ACCESS-SENTINEL-3")
            #expect(s.provider.refreshCalls == 1)
            // The provider id and uid name the account as well as id does.
            #expect(try #require(await Self.refresh(s, "/account/refresh?provider=acme&uid=4242")).status == 200)
            #expect(s.provider.refreshCalls == 2)
        }
    }

    @Test func onlyTheAPIKeyMayRefresh() async throws {
        try await Self.withBroker { s in
            let none = try #require(await Self.refresh(s, headers: []))
            #expect(none.status == 401 && none.header("WWW-Authenticate") == "Bearer realm=\"token-broker\"")
            let wrong = try #require(await Self.refresh(s, headers: [("Authorization", "Bearer not-the-key-0123456789")]))
            #expect(wrong.status == 401)
            // The browser that connected the account may read it, not force a provider call.
            let browser = s.browser
            #expect(await browser.connect(provider: "acme")?.status == 200)
            #expect(try #require(await browser.get("/account?id=acme:4242")).status == 200)
            let refused = try #require(
                await TestHTTP.send(
                    port: s.broker.port, method: "POST", target: "/account/refresh?id=acme:4242",
                    headers: browser.jar.header))
            #expect(refused.status == 401)
            #expect(s.provider.refreshCalls == 0)
            let get = try #require(await TestHTTP.send(port: s.broker.port, target: "/account/refresh?id=acme:4242", headers: Self.api))
            #expect(get.status == 405 && get.header("Allow") == "POST")
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
