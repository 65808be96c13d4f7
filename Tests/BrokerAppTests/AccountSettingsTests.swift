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

    /// Algolia's shape: the application id names the host and travels in its own header beside the key, on the
    /// verification call and on every proxied call; the fake accepts only when the header names the host it was called at.
    @Test func aSettingTravelsInAHeaderAsWellAsInTheHost() async throws {
        let s = try await Self.setUp()
        let port = s.fake.port
        let created = try await s.send(
            "POST", "/accounts",
            #"{"provider":"algol","uid":"shop","settings":{"application_id":"Acme7"},"credentials":{"api_key":"k"}}"#)
        #expect(created.status == 201, "\(created.body)")
        let proxied = try await s.send("GET", "/proxy/1/indexes/products", account: "algol:shop")
        #expect(proxied.status == 200, "\(proxied.body)")
        let calls = s.fake.state.calls
        #expect(
            calls.map { "\($0.host ?? "") \($0.path)" } == [
                "acme7.localhost:\(port) /algolia/1/indexes", "acme7.localhost:\(port) /algolia/1/indexes/products",
            ])
        #expect(calls.map(\.applicationID) == ["Acme7", "Acme7"] && calls.allSatisfy(\.accepted))
        // Verified again on demand, with the same header.
        let verified = try await s.send("POST", "/account/verify?id=algol:shop")
        #expect(verified.status == 200, "\(verified.body)")
        #expect(s.fake.state.calls.last?.applicationID == "Acme7" && s.fake.state.calls.last?.accepted == true)
        // The fake's list for other processes names hosts and paths, never a credential.
        let listed = try #require(await TestHTTP.send(port: s.fake.port, target: "/_fake/calls"))
        #expect(listed.status == 200 && listed.body.contains("\"host\":\"acme7.localhost:\(port)\"") && !listed.body.contains("\"k\""))
        // The host is written in lower case (RFC 3986 §3.2.2: hosts are case-insensitive); the header as given.
        // A wrong key at the right application: the provider's refusal, nothing stored.
        let refused = try await s.send(
            "POST", "/accounts",
            #"{"provider":"algol","uid":"other","settings":{"application_id":"Globex"},"credentials":{"api_key":"wrong-key"}}"#)
        #expect(refused.status == 422, "\(refused.body)")
        #expect(s.fake.state.calls.last?.applicationID == "Globex" && s.fake.state.calls.last?.accepted == false)
        #expect(!refused.body.contains("wrong-key"))
        // A value that could split the header or move the host never reaches a header: refused before any call.
        let before = s.fake.state.calls.count
        for bad in [#"Acme\r\nX-Evil: 1"#, "acme.evil.com", "{api_key}"] {
            let reply = try await s.send(
                "POST", "/accounts", #"{"provider":"algol","settings":{"application_id":"\#(bad)"},"credentials":{"api_key":"k"}}"#)
            #expect(reply.status == 400 && reply.body.contains("invalid_setting") && !reply.body.contains("evil"), "\(reply.body)")
        }
        #expect(s.fake.state.calls.count == before)
    }

    /// A placement's `{name}` must be a declared field or setting, checked when the file is read; a setting may be
    /// used by a placement alone, and may not share a field's name.
    @Test func aPlacementNamesOnlyDeclaredFieldsAndSettings() throws {
        func load(_ entry: String) -> Result<ProviderRegistry, ProviderConfigurationError> {
            let file =
                #"{"providers": {"p": {"auth": "api_key", "api_base_url": "https://api.example.com", "#
                + entry + "}}}"
            return Result { () throws(ProviderConfigurationError) in
                try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8))
            }
        }
        let region = #""settings": [{"name": "region", "description": "Region", "pattern": "[a-z]{2}[0-9]"}]"#
        // A setting carried in a header only, not in any URL.
        let loaded = try load(#""credential_extra_headers": {"X-Region": "{region}"}, "# + region).get()
        let provider = try #require(loaded.provider(named: "p"))
        let (resolved, _) = try provider.applyingSettings(["region": "eu1"])
        #expect(resolved.credentials?.additionalHeaders == [CredentialScheme.HeaderField(name: "X-Region", format: "eu1")])
        #expect(resolved.credentials?.placement == .header(name: "Authorization", format: "Bearer {api_key}"))
        // A format may name fields and settings together, and must still carry a field.
        let both = try load(#""credential_format": "Key {api_key} region={region}", "# + region).get()
        let (filled, _) = try #require(both.provider(named: "p")).applyingSettings(["region": "us2"])
        #expect(filled.credentials?.placement == .header(name: "Authorization", format: "Key {api_key} region=us2"))
        let refusals: [(String, String)] = [
            (#""credential_extra_headers": {"X-Region": "{regio}"}, "# + region, "credential_extra_headers"),
            (#""credential_format": "{region}", "# + region, "credential_format"),
            (#""credential_format": "{api_key} {zone}", "# + region, "credential_format"),
            (#""credential_extra_headers": {"X-Region": "{region}"}"#, "credential_extra_headers"),
            (#""credential_extra_headers": {"X-A": "{api_key}"}, "settings": [{"name": "api_key", "description": "x"}]"#, "settings"),
            (#""settings": [{"name": "zone", "description": "Zone"}]"#, "settings"),
        ]
        for (entry, key) in refusals {
            switch load(entry) {
            case .success: Issue.record("loaded: \(entry)")
            case .failure(let error): #expect(error.key == key, "\(entry): \(error)")
            }
        }
        // A file's own settings over a preset's must still declare what the preset's placement names.
        let renamed = #"""
            {"providers": {"algolia": {"api_base_url": "https://{app}-dsn.algolia.net",
              "settings": [{"name": "app", "description": "Application ID"}]}}}
            """#
        let error = #expect(throws: ProviderConfigurationError.self) {
            try ProviderRegistry.load(environment: [:], providersFile: Array(renamed.utf8))
        }
        #expect(error?.key == "settings" && error?.message.contains("{application_id}") == true, "\(String(describing: error))")
        let preset = try ProviderRegistry.load(environment: [:], providersFile: Array(#"{"providers": {"algolia": {}}}"#.utf8))
        #expect(preset.provider(named: "algolia")?.accountSettings.map(\.name) == ["application_id"])
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
