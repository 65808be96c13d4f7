import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Per-account settings: a provider whose API base is `http://{subdomain}.localhost:PORT/…` takes each account's
/// subdomain on `POST /accounts`, verifies and proxies at that host (the fake sees it in `Host`), and refuses every
/// value that could move the host or add to the URL with `400 invalid_setting` before any connection is opened.
@Suite(.scoped) struct AccountSettingsTests {
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Content-Type", "application/json")]
    static let token = "SENTINEL-TOKEN-sub-51"

    struct Setup {
        let fake: FakeCredentialProvider
        let broker: BrokerHarness

        func send(_ method: String, _ target: String, _ body: String = "", account: String? = nil) async throws -> TestHTTP.Reply {
            let named = account.map { [("Broker-Account", $0)] } ?? []
            return try #require(
                await TestHTTP.send(
                    port: broker.port, method: method, target: target, headers: AccountSettingsTests.api + named, body: body))
        }
    }

    static func setUp(baseOverride: String? = nil) async throws -> Setup {
        let fake = FakeCredentialProvider(apiKey: "k", token: token, username: "u", password: "p")
        try fake.start()
        TestScope.required("a fake provider")?.onEnd { await fake.stop() }
        var file = fake.settingsProvidersFile
        if let baseOverride { file = file.replacingOccurrences(of: "http://{subdomain}.localhost:\(fake.port)", with: baseOverride) }
        let broker = try BrokerHarness(providersJSON: file)
        return Setup(fake: fake, broker: broker)
    }

    static func json(_ body: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }

    @Test func theAccountsSubdomainIsTheHostItIsVerifiedAndProxiedAt() async throws {
        let s = try await Self.setUp()
        let created = try await s.send(
            "POST", "/accounts",
            #"{"provider":"subdom","uid":"team-a","settings":{"subdomain":"acme"},"credentials":{"token":"\#(Self.token)"}}"#)
        #expect(created.status == 201, "\(created.body)")
        #expect(Self.json(created.body)["settings"] as? [String: String] == ["subdomain": "acme"])
        #expect(s.fake.state.calls.map(\.host) == ["acme.localhost:\(s.fake.port)"])
        #expect(s.fake.state.calls.map(\.path) == ["/bearer/me"])
        let account = Self.json(try await s.send("GET", "/account?id=subdom:team-a").body)
        #expect(account["settings"] as? [String: String] == ["subdomain": "acme"])
        // A second account of the same provider at another subdomain: each call goes to its own host.
        let other = try await s.send(
            "POST", "/accounts",
            #"{"provider":"subdom","uid":"team-b","settings":{"subdomain":"globex"},"credentials":{"token":"\#(Self.token)"}}"#)
        #expect(other.status == 201, "\(other.body)")
        let proxied = try await s.send("GET", "/proxy/tickets", account: "subdom:team-a")
        #expect(proxied.status == 200, "\(proxied.body)")
        let proxiedB = try await s.send("GET", "/proxy/tickets", account: "subdom:team-b")
        #expect(proxiedB.status == 200, "\(proxiedB.body)")
        let verified = try await s.send("POST", "/account/verify?id=subdom:team-b")
        #expect(verified.status == 200, "\(verified.body)")
        let port = s.fake.port
        let providers = try await s.send("GET", "/providers")
        #expect(
            providers.body.contains(
                #""account_settings":[{"name":"subdomain","description":"Your team's subdomain","pattern":"[a-wyz0-9][a-z0-9-]*","in_host":true}]"#
            ), "\(providers.body)")
        #expect(
            s.fake.state.calls.map { "\($0.host ?? "") \($0.path)" } == [
                "acme.localhost:\(port) /bearer/me", "globex.localhost:\(port) /bearer/me", "acme.localhost:\(port) /bearer/tickets",
                "globex.localhost:\(port) /bearer/tickets", "globex.localhost:\(port) /bearer/me",
            ])
    }

    /// Each value is refused, naming the setting, and no socket is opened: the provider's base points at a listener
    /// that nobody serves and that counts the connections made to it.
    @Test(arguments: [
        #""subdomain":"acme.evil.com""#, #""subdomain":"%2e""#, #""subdomain":"a@b""#, #""subdomain":"..""#, #""subdomain":"""#,
        #""subdomain":"a/b""#, #""subdomain":"acme/../x""#, #""subdomain":"-acme""#, #""subdomain":"xenon""#,
        #""subdomain":"acme:80""#, #""subdomain":7"#, #""subdomains":"acme""#, "",
    ])
    func anUnfitSettingIsRefusedBeforeAnyConnection(member: String) async throws {
        let listener = try LoopbackListener()
        let s = try await Self.setUp(baseOverride: "http://{subdomain}.localhost:\(listener.port)")
        let reply = try await s.send(
            "POST", "/accounts", #"{"provider":"subdom","settings":{\#(member)},"credentials":{"token":"\#(Self.token)"}}"#)
        #expect(reply.status == 400, "\(reply.body)")
        let body = Self.json(reply.body)
        #expect(body["error"] as? String == "invalid_setting", "\(reply.body)")
        let named = member.hasPrefix(#""subdomains""#) ? #""subdomains""# : #""subdomain""#
        #expect((body["message"] as? String)?.contains(named) == true, "\(reply.body)")
        #expect(!reply.body.contains("evil.com") && !reply.body.contains("%2e"))
        #expect(listener.acceptedCount() == 0)
        #expect(try await s.send("GET", "/accounts").body.contains("subdom:") == false)
    }

    @Test func aRecordWithoutSettingsOfAProviderThatNowHasThemIsRefusedAtUseNotRead() throws {
        // The check is the provider's: a stored account lacking a required setting cannot be proxied, but it reads.
        var provider = ProviderConfiguration(name: "p", kind: .bearer)
        provider.apiBaseURL = "https://{subdomain}.example.com/api"
        provider.accountSettings = [AccountSetting(name: "subdomain", description: "Your subdomain")]
        #expect(throws: BrokerError.invalidSetting(name: "subdomain", reason: "is required: Your subdomain")) {
            try provider.applyingSettings([:])
        }
        let (resolved, kept) = try provider.applyingSettings(["subdomain": "acme"])
        #expect(resolved.apiBaseURL == "https://acme.example.com/api" && kept == ["subdomain": "acme"])
        // In a path, a dot is fine (one segment, not '.' or '..'); in a host it is not.
        provider.apiBaseURL = "https://api.example.com/{subdomain}"
        #expect(try provider.applyingSettings(["subdomain": "acme.eu"]).0.apiBaseURL == "https://api.example.com/acme.eu")
        #expect(throws: BrokerError.self) { try provider.applyingSettings(["subdomain": ".."]) }
    }
}
