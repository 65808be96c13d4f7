import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Testing

/// An OpenID provider before and after its discovery document loads: sign-ins refused with the reason,
/// accounts backing off as from any transient failure, both working once the document is there.
struct OIDCExchangeTests {
    static let documentURL = OIDCProviderMetadata.documentURL(issuer: GoogleOpenID.issuer)

    @Test func beforeItsDocumentLoadsAnOpenIDProviderRefusesSignInsAndItsAccountsWaitWithoutReauthorization() async throws {
        try await TemporaryDirectory.with { directory in
            let registry = try ProviderRegistry.load(environment: BrokerHarness.environment, providersFile: nil)
            let upstream = FakeUpstream()
            let clock = TestClock()
            let accounts = try JSONFileAccountRepository(directory: directory)
            let authorization = AuthorizationService(
                registry: registry, accounts: accounts, flows: InMemoryFlowStore(), upstream: upstream,
                publicURL: BrokerHarness.publicURL, flowTTL: 600, returnToAllowlist: [], now: clock.function)
            let service = AccountService(
                accounts: accounts, registry: registry, upstream: upstream, redirectURI: authorization.redirectURI, now: clock.function)
            let discovery = OIDCDiscovery(registry: registry, upstream: upstream)

            let pending = await brokerError { try await authorization.begin(provider: "google", returnTo: nil, binding: "api") }
            #expect(pending == .providerUnavailable("google", reason: "discovery pending"))
            await upstream.on(Self.documentURL, respond: ProviderWire.response(503, "text/html", "<h1>down</h1>"))
            #expect(await discovery.load("google") == .failed("HTTP 503 (not a 2xx status)"))
            let failed = await brokerError { try await authorization.begin(provider: "google", returnTo: nil, binding: "api") }
            #expect(failed == .providerUnavailable("google", reason: "discovery failed: HTTP 503 (not a 2xx status)"))
            #expect(failed?.message.contains("discovery failed") == true)

            var account = Account.make(provider: "google", uid: GoogleOpenID.subject, accessToken: "ya29.before-SENTINEL")
            account.refreshToken = Secret("1//refresh-SENTINEL")
            account.expiresAt = Date.fixture.addingTimeInterval(-1)
            try await accounts.put(account)
            let refusal = await brokerError { try await service.account(id: account.accountID) }
            #expect(refusal?.code == "upstream_error")
            #expect(try await accounts.get(id: account.accountID)?.status == .active)
            #expect(await upstream.requests(to: "https://oauth2.googleapis.com/").isEmpty)

            await upstream.on(Self.documentURL, respond: ProviderWire.response(200, "application/json", GoogleOpenID.document))
            #expect(await discovery.load("google") == .loaded(try GoogleOpenID.metadata))
            // A later failure never unloads a document that loaded.
            await upstream.on(Self.documentURL, fail: .timeout)
            await discovery.loadPending()
            #expect(await upstream.requests(to: Self.documentURL).count == 2)
            await upstream.on(
                "https://oauth2.googleapis.com/token", respond: ProviderWire.googleToken(accessToken: "ya29.after", refreshToken: nil))
            clock.advance(3600)
            #expect(try await service.account(id: account.accountID).accessToken.value == "ya29.after")
            let start = try await authorization.begin(provider: "google", returnTo: nil, binding: "api")
            #expect(start.authorizeURL.hasPrefix("https://accounts.google.com/o/oauth2/v2/auth?"))
            #expect(start.authorizeURL.contains("&nonce="))
        }
    }
}
