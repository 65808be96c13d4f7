import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Every preset of the catalogue, enabled by its two credential variables alone, through connect → read → refresh →
/// revoke against the fake OAuth 2.0 provider configured to speak its provider's wire format, over real sockets.
///
/// The preset keeps its real endpoints: ``HostRewritingUpstream`` sends each
/// call to the fake as `/<host><path>`, so a wrong host, path, parameter,
/// header, body format or client authentication is a violation the fake
/// records and refuses (``CatalogueCase/Wire``). The cases run one at a time: each starts a broker and a
/// provider, and forty at once would crowd the timing-sensitive suites beside them.
@Suite(.serialized, .scoped) struct CatalogueEndToEndTests {
    static let clientSecret = "CATALOGUE-CLIENT-SECRET-SENTINEL-0123456789"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    struct Setup {
        let catalogue: CatalogueCase
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness
        let clock: TestClock
        var browser: Browser { Browser(brokerPort: broker.port, providerPort: provider.port) }
        var accountPath: String {
            "/account?id="
                + (AccountID(provider: catalogue.preset, uid: catalogue.uid).string
                    .addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        }
        func read() async -> TestHTTP.Reply? {
            await TestHTTP.send(port: broker.port, target: accountPath, headers: CatalogueEndToEndTests.api)
        }

        /// Whether the preset can sign in: at once, or for an OpenID one once its discovery document has loaded.
        func ready() async -> Bool {
            guard catalogue.wire.openIDIssuer != nil else { return true }
            // Bounded generously: under a loaded machine URLSession's shared work queue can hold a first fetch for seconds.
            return await eventually(timeout: 60) {
                guard let reply = await TestHTTP.send(port: broker.port, target: "/providers"),
                    let object = try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any],
                    let items = object["providers"] as? [[String: Any]]
                else { return false }
                return items.contains { $0["name"] as? String == catalogue.preset && $0["available"] as? Bool == true }
            }
        }

        /// Browser → broker → the fake's authorize page (at the preset's real host and path) → broker callback.
        func connect() async -> TestHTTP.Reply? {
            let browser = self.browser  // one cookie jar for the whole dance
            guard let start = await browser.authorize("provider=" + catalogue.preset), start.status == 302,
                let location = start.header("Location").flatMap(URLComponents.init(string:)), let host = location.host,
                let query = location.percentEncodedQuery,
                let approved = await TestHTTP.send(port: provider.port, target: "/" + host + location.percentEncodedPath + "?" + query),
                let back = approved.header("Location").flatMap(URL.init(string:))
            else { return nil }
            return await browser.get(back.path + (back.query.map { "?" + $0 } ?? ""))
        }
    }

    /// A broker whose environment holds the preset's two credential variables (and any endpoint variable) and nothing about the provider.
    static func setUp(_ catalogue: CatalogueCase) throws -> Setup {
        let provider = try FakeOAuth2Provider.scoped(
            catalogue.wire.configuration(clientSecret: clientSecret),
            behaviour: catalogue.wire.behaviour(rotates: catalogue.rotates))
        let clock = TestClock(Date(timeIntervalSince1970: 1_796_025_600))
        let prefix = catalogue.preset.uppercased()
        let environment = catalogue.environment.merging([
            prefix + "_CLIENT_ID": provider.configuration.clientID, prefix + "_CLIENT_SECRET": clientSecret, "BROKER_REFRESH_INTERVAL": "0",
        ]) { $1 }
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {}}", environment: environment,
            upstream: HostRewritingUpstream(port: provider.port), now: { clock.now })
        return Setup(catalogue: catalogue, provider: provider, broker: broker, clock: clock)
    }

    static func field(_ body: String, _ name: String) -> String? {
        guard let range = body.range(of: "\"\(name)\":") else { return nil }
        let rest = body[range.upperBound...]
        if rest.hasPrefix("\"") { return String(rest.dropFirst().prefix { $0 != "\"" }) }
        return String(rest.prefix { $0 != "," && $0 != "}" })
    }

    /// Atlassian's site list under `raw.accessible_resources`: the cloud id a back end calls the gateway with, no avatar.
    static func expectCloudID(in body: String) throws {
        let account = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        let sites = (account?["raw"] as? [String: Any])?["accessible_resources"] as? [[String: Any]]
        #expect(sites?.first?["id"] as? String == "1324a887-45db-1bf4-1e99-ef0ff456d421", "\(body)")
        #expect(sites?.first?["url"] as? String == "https://your-domain.atlassian.net")
        #expect(sites?.first?["avatarUrl"] == nil)
    }

    @Test(arguments: CatalogueCase.all)
    func connectReadRefreshAndRevoke(_ catalogue: CatalogueCase) async throws {
        let s = try Self.setUp(catalogue)
        let wire = catalogue.wire
        #expect(await s.ready())

        // Connect: the account is the provider's user, named where the preset says.
        let connected = try #require(await s.connect())
        #expect(connected.status == 200, "\(catalogue.preset): \(connected.body) \(s.provider.ledger.violations)")
        let first = try #require(await s.read())
        #expect(first.status == 200, "\(first.body)")
        #expect(Self.field(first.body, "access_token") == s.provider.accessTokens.first)
        #expect(Self.field(first.body, "screen_name") == catalogue.screenName)
        // The answer's other fields come back under `raw`, never a refresh token among them.
        if let refresh = s.provider.ledger.currentRefreshToken { #expect(!first.body.contains(refresh), "\(catalogue.preset)") }
        if catalogue.preset == "salesforce" {
            let account = try JSONSerialization.jsonObject(with: Data(first.body.utf8)) as? [String: Any]
            #expect((account?["raw"] as? [String: Any])?["instance_url"] as? String == "https://yourInstance.my.salesforce.com")
        }
        if catalogue.preset == "atlassian" { try Self.expectCloudID(in: first.body) }
        if wire.openIDIssuer != nil {
            // The endpoints came from the tenant's document; the ID token (its sub the fake's "4242") passed its checks.
            #expect(s.provider.ledger.discoveryCalls >= 1)
            #expect(first.body.contains("\"id_token\""))
        }
        // What the account holds, and so what revocation must name, as refreshes move on.
        var heldAccess = s.provider.accessTokens.last
        var heldRefresh = s.provider.ledger.currentRefreshToken

        // Refresh: due when the token nears its end; a rotated refresh token is the one presented next.
        if let lifetime = wire.expiresIn, wire.issuesRefreshTokens {
            for round in 1...2 {
                s.clock.advance(TimeInterval(lifetime) - 100)
                let refreshed = try #require(await s.read())
                #expect(refreshed.status == 200, "\(catalogue.preset) refresh \(round): \(refreshed.body)")
                #expect(Self.field(refreshed.body, "access_token") == s.provider.accessTokens.last)
                #expect(s.provider.refreshCalls == round)
                heldAccess = s.provider.accessTokens.last
                heldRefresh = s.provider.ledger.currentRefreshToken
                // What connecting looked up stays through refreshes, whose answers never carry it.
                if catalogue.preset == "atlassian" { try Self.expectCloudID(in: refreshed.body) }
            }
            #expect(s.provider.ledger.stalePresentations == 0)
        } else if wire.issuesRefreshTokens {
            // No expires_in: the broker never knows the token is due, so the refresh grant is tried through the client.
            let preset = try #require(ProviderPresets.preset(named: catalogue.preset, environment: s.broker.environment))
            let client = OAuth2Client(
                settings: try OAuth2Settings(preset), redirectURI: "http://localhost:8080/callback",
                upstream: HostRewritingUpstream(port: s.provider.port))
            let grant = try await client.refresh(refreshToken: Secret(try #require(s.provider.ledger.currentRefreshToken)))
            #expect(grant.accessToken.value == s.provider.accessTokens.last)
            #expect(Self.field(try #require(await s.read()).body, "expires_at") == "null")
        } else {
            s.clock.advance(TimeInterval(wire.expiresIn ?? 0) + 1)
            #expect(try #require(await s.read()).status == 410)
        }

        // Revoke: DELETE names the token the provider revokes, the way it wants it named.
        let tokenAtDeletion = wire.revokesAccessToken || !wire.issuesRefreshTokens ? heldAccess : heldRefresh
        let deleted = try #require(await TestHTTP.send(port: s.broker.port, method: "DELETE", target: s.accountPath, headers: Self.api))
        #expect(deleted.status == 204, "\(catalogue.preset): \(deleted.body)")
        #expect(s.provider.ledger.revoked == (wire.revokePath == nil ? [] : [tokenAtDeletion ?? "-"]))
        #expect(try #require(await s.read()).status == 404)

        #expect(s.provider.ledger.violations == [])
        #expect(!s.broker.log.contains("SENTINEL"))
    }

    @Test(arguments: CatalogueCase.all.filter { $0.wire.expiresIn != nil && $0.wire.issuesRefreshTokens })
    func aDeadRefreshTokenInTheProvidersErrorShape(_ catalogue: CatalogueCase) async throws {
        let s = try Self.setUp(catalogue)
        #expect(await s.ready())
        #expect(try #require(await s.connect()).status == 200)
        s.provider.set { $0.refreshFailure = .invalidGrant }
        s.clock.advance(TimeInterval(catalogue.wire.expiresIn ?? 0) + 1)
        let reply = try #require(await s.read())
        if catalogue.namesDeadRefreshTokens {
            #expect(
                reply.status == 410 && reply.body.contains("reauthorization_required"), "\(catalogue.preset): \(reply.status) \(reply.body)"
            )
        } else {
            // The provider names a dead refresh token in a shape the broker does not read as one: a transient failure.
            #expect(reply.status == 502 && reply.body.contains("upstream_error"), "\(catalogue.preset): \(reply.body)")
        }
        #expect(!reply.body.contains("SENTINEL"))
    }

    @Test func theTwoCredentialVariablesAloneConfigureEachPreset() throws {
        for name in ProviderPresets.names {
            let preset = try #require(ProviderPresets.preset(named: name, environment: [:]))
            let variables = preset.settingNames.values.sorted()
            #expect(preset.missingSettings.sorted() == variables, "\(name)")
            let environment = Dictionary(uniqueKeysWithValues: variables.map { ($0, "value-\($0)") })
            #expect(ProviderPresets.preset(named: name, environment: environment)?.isConfigured == true, "\(name)")
        }
        for catalogue in CatalogueCase.all {
            let prefix = catalogue.preset.uppercased()
            #expect(
                ProviderPresets.preset(named: catalogue.preset, environment: [:])?.missingSettings == [
                    prefix + "_CLIENT_ID", prefix + "_CLIENT_SECRET",
                ])
        }
        #expect(
            Set(CatalogueCase.all.map(\.preset))
                // Okta, Shopify and Zendesk live at each account's host: OAuthSettingPresetTests and OAuthSettingsTests cover them.
                == Set(ProviderPresets.names).subtracting(["github", "google", "tmdb", "twitter", "weibo", "okta", "shopify", "zendesk"]))
    }
}
