import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Granted scopes per account and step-up (issue 34), end to end: real sockets to the in-process broker and to
/// the fake OAuth 2.0 provider, which answers `scope` as asked unless told to withhold some.
@Suite(.scoped) struct ScopeStepUpTests {
    static let clientSecret = "ACME-CLIENT-SECRET-SENTINEL-0123456789"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
    static let apiJSON = api + [("Content-Type", "application/json")]

    struct Setup {
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness
        var browser: Browser { Browser(brokerPort: broker.port, providerPort: provider.port) }

        func get(_ target: String) async throws -> (status: Int, json: [String: Any], reply: TestHTTP.Reply) {
            let reply = try #require(await TestHTTP.send(port: broker.port, target: target, headers: ScopeStepUpTests.api))
            let json = (try? JSONSerialization.jsonObject(with: Data(reply.body.utf8))) as? [String: Any] ?? [:]
            return (reply.status, json, reply)
        }

        /// Follows an authorize URL through the fake provider and back to `/callback`, as the browser would.
        func complete(_ authorizeURL: String) async throws -> TestHTTP.Reply {
            let callback = try #require(await browser.visitProvider(authorizeURL))
            return try #require(await browser.get(callback, headers: [("Accept", "application/json")]))
        }

        /// `POST /authorize` for end user `u1` tagged `plan:pro`, asking for `scopes`, completed in the browser.
        func connect(scopes: String) async throws -> TestHTTP.Reply {
            let body = #"{"provider":"acme","end_user_id":"u1","tags":{"plan":"pro"},"scopes":\#(scopes)}"#
            let started = try #require(
                await TestHTTP.send(port: broker.port, method: "POST", target: "/authorize", headers: ScopeStepUpTests.apiJSON, body: body))
            #expect(started.status == 200)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(started.body.utf8)) as? [String: Any])
            return try await complete(try #require(json["authorize_url"] as? String))
        }
    }

    static func setUp(dataDirectory: String? = nil, environment: [String: String] = [:]) throws -> Setup {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: clientSecret))
        return try Setup(provider: provider, broker: broker(for: provider, dataDirectory: dataDirectory, environment: environment))
    }

    static func broker(for provider: FakeOAuth2Provider, dataDirectory: String?, environment: [String: String] = [:]) throws
        -> BrokerHarness
    {
        try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry)}}",
            environment: ["FAKE_ACME_SECRET": clientSecret, "BROKER_REFRESH_INTERVAL": "0"].merging(environment) { $1 },
            dataDirectory: dataDirectory)
    }

    @Test func aReadAskingForMoreScopesStepsUpTheSameAccount() async throws {
        let s = try Self.setUp()
        #expect(try await s.connect(scopes: #"["read"]"#).status == 200)
        let first = try await s.get("/account?id=acme:4242")
        #expect(first.status == 200)
        #expect(first.json["scopes"] as? [String] == ["read"])
        let token = try #require(first.json["access_token"] as? String)

        // Asked for read and write: 403 insufficient_scope naming write, with a flow for the union.
        let refused = try await s.get("/account?id=acme:4242&scopes=read,write")
        #expect(refused.status == 403)
        #expect(refused.json["error"] as? String == "insufficient_scope")
        #expect(refused.json["missing_scopes"] as? [String] == ["write"])
        #expect(refused.json["granted_scopes"] as? [String] == ["read"])
        #expect(refused.json["scopes"] as? [String] == ["read", "write"])
        #expect(refused.json["access_token"] == nil)
        #expect(!refused.reply.body.contains(token))
        #expect(refused.reply.header("WWW-Authenticate")?.contains("error=\"insufficient_scope\"") == true)
        let url = try #require(refused.json["authorize_url"] as? String)
        let state = try #require(refused.json["state"] as? String)
        #expect(url.contains("scope=read%20write") || url.contains("scope=read+write"))

        let callback = try await s.complete(url)
        #expect(callback.status == 200)
        let upgraded = try await s.get("/account?id=acme:4242&scopes=read,write")
        #expect(upgraded.status == 200)
        #expect(upgraded.json["id"] as? String == "acme:4242")
        #expect(upgraded.json["scopes"] as? [String] == ["read", "write"])
        #expect(upgraded.json["end_user_id"] as? String == "u1")
        #expect(upgraded.json["tags"] as? [String: String] == ["plan": "pro"])
        #expect(upgraded.json["access_token"] as? String != token)
        let outcome = try await s.get("/flows/" + state)
        #expect(outcome.json["status"] as? String == "completed")
        #expect(outcome.json["account"] as? String == "acme:4242")
        let list = try await s.get("/accounts")
        let accounts = try #require(list.json["accounts"] as? [[String: Any]])
        #expect(accounts.count == 1)
        #expect(accounts.first?["scopes"] as? [String] == ["read", "write"])
    }

    @Test func repeatedStepUpsForTheSameScopesShareOnePendingFlowUntilItEnds() async throws {
        let s = try Self.setUp()
        #expect(try await s.connect(scopes: #"["read"]"#).status == 200)
        let first = try await s.get("/account?id=acme:4242&scopes=read,write")
        let state = try #require(first.json["state"] as? String)
        // The same account and scope set, in another order: the pending flow again, nothing new started.
        let again = try await s.get("/account?id=acme:4242&scopes=write,read")
        #expect(again.status == 403)
        #expect(again.json["state"] as? String == state)
        #expect(again.json["authorize_url"] as? String == first.json["authorize_url"] as? String)
        // Another scope set is another flow.
        let other = try await s.get("/account?id=acme:4242&scopes=admin")
        let otherState = try #require(other.json["state"] as? String)
        #expect(otherState != state)
        // Once the flow ended (here: completed), a later step-up starts a new one.
        s.provider.set { $0.withheldScopes = ["write"] }
        #expect(try await s.complete(try #require(first.json["authorize_url"] as? String)).status == 403)
        let after = try await s.get("/account?id=acme:4242&scopes=read,write")
        let newState = try #require(after.json["state"] as? String)
        #expect(newState != state)
        #expect(try await s.get("/flows/" + state).json["status"] as? String == "failed")
        #expect(try await s.get("/flows/" + newState).json["status"] as? String == "pending")
    }

    @Test func aPartialGrantChangesNothingAndFailsTheFlow() async throws {
        let receiver = try WebhookReceiver()
        let s = try Self.setUp(environment: WebhookEndToEndTests.environment(receiver))
        #expect(try await s.connect(scopes: #""read""#).status == 200)
        let before = try await s.get("/account?id=acme:4242")
        s.provider.set { $0.withheldScopes = ["write"] }
        let refused = try await s.get("/account?id=acme:4242&scopes=write")
        #expect(refused.status == 403)
        let state = try #require(refused.json["state"] as? String)
        let callback = try await s.complete(try #require(refused.json["authorize_url"] as? String))
        #expect(callback.status == 403)
        #expect(callback.body.contains("insufficient_scope"))
        let after = try await s.get("/account?id=acme:4242")
        #expect(after.json["access_token"] as? String == before.json["access_token"] as? String)
        #expect(after.json["scopes"] as? [String] == ["read"])
        #expect(after.json["updated_at"] as? String == before.json["updated_at"] as? String)
        let outcome = try await s.get("/flows/" + state)
        #expect(outcome.json["status"] as? String == "failed")
        #expect(outcome.json["error"] as? String == "insufficient_scope")
        // flow.failed names the state and the error; the account was not touched, so no account.reconnected.
        #expect(await eventually { receiver.accepted.contains { $0.type == "flow.failed" } })
        let failed = try #require(receiver.accepted.first { $0.type == "flow.failed" })
        #expect(failed.data("error") as? String == "insufficient_scope")
        #expect(failed.data("state") as? String == state)
        #expect(receiver.accepted.filter { $0.type == "account.reconnected" }.isEmpty)
        await s.broker.stop()
        await receiver.stop()
        #expect(s.broker.log.contains("insufficient_scope"))
    }

    @Test func scopesOnEntryAreChecked() async throws {
        let s = try Self.setUp()
        for bad in ["%22a%22", "a%5Cb", String(repeating: "a", count: 257)] {
            let reply = try #require(await s.browser.authorize("provider=acme&scopes=" + bad))
            #expect(reply.status == 400)
        }
        let tooMany = (0..<65).map { "s\($0)" }.joined(separator: ",")
        #expect(try #require(await s.browser.authorize("provider=acme&scopes=" + tooMany)).status == 400)
        // GET /authorize takes per-flow scopes and sends them on.
        let start = try #require(await s.browser.authorize("provider=acme&scopes=read,write"))
        #expect(start.status == 302)
        #expect(start.header("Location")?.contains("scope=read%20write") == true)
        #expect(try await s.get("/account?id=acme:4242&scopes=a%20%22").status == 400)
    }

    @Test func scopesSurviveARestartOfTheFileStore() async throws {
        let root = try TemporaryDirectory.scoped(prefix: "scopes-restart")
        let s = try Self.setUp(dataDirectory: root + "/data")
        #expect(try await s.connect(scopes: #""read write""#).status == 200)
        await s.broker.stop()
        let again = try Self.broker(for: s.provider, dataDirectory: root + "/data")
        let reply = try #require(await TestHTTP.send(port: again.port, target: "/account?id=acme:4242&scopes=write", headers: Self.api))
        #expect(reply.status == 200)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any])
        #expect(json["scopes"] as? [String] == ["read", "write"])
    }

    @Test func aRefreshWhoseAnswerNamesTheScopeUpdatesIt() async throws {
        let s = try Self.setUp()
        #expect(try await s.connect(scopes: #"["read","write"]"#).status == 200)
        s.provider.set { $0.withheldScopes = ["write"] }
        let refreshed = try #require(
            await TestHTTP.send(port: s.broker.port, method: "POST", target: "/account/refresh?id=acme:4242", headers: Self.api))
        #expect(refreshed.status == 200)
        let after = try await s.get("/account?id=acme:4242")
        #expect(after.json["scopes"] as? [String] == ["read"])
        #expect(try await s.get("/account?id=acme:4242&scopes=write").status == 403)
    }

    @Test func aProviderListingItsScopesRefusesOthers() async throws {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: Self.clientSecret))
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry(extra: #""allowed_scopes":["read","write"]"#))}}",
            environment: ["FAKE_ACME_SECRET": Self.clientSecret, "BROKER_REFRESH_INTERVAL": "0"])
        let body = #"{"provider":"acme","scopes":["read","admin","delete"]}"#
        let refused = try #require(
            await TestHTTP.send(port: broker.port, method: "POST", target: "/authorize", headers: Self.apiJSON, body: body))
        #expect(refused.status == 400)
        #expect(refused.body.contains("admin delete"))
        let browser = Browser(brokerPort: broker.port, providerPort: provider.port)
        #expect(try #require(await browser.authorize("provider=acme&scopes=write")).status == 302)
        #expect(try #require(await browser.authorize("provider=acme&scopes=admin")).status == 400)
        // A step-up asking for a scope the provider does not allow is refused too, and starts no flow.
        let connected = try #require(
            await TestHTTP.send(
                port: broker.port, method: "POST", target: "/authorize", headers: Self.apiJSON,
                body: #"{"provider":"acme","scopes":"read"}"#))
        let start = try #require(try JSONSerialization.jsonObject(with: Data(connected.body.utf8)) as? [String: Any])
        let url = try #require(start["authorize_url"] as? String)
        let callback = try #require(await browser.visitProvider(url))
        let completed = try #require(await browser.get(callback, headers: [("Accept", "application/json")]))
        #expect(completed.status == 200)
        let stepUp = try #require(await TestHTTP.send(port: broker.port, target: "/account?id=acme:4242&scopes=admin", headers: Self.api))
        #expect(stepUp.status == 400 && stepUp.body.contains("admin"))
    }

    @Test func aStepUpAddsTheProvidersUpgradeParametersOnly() async throws {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: Self.clientSecret))
        let upgrade = #""scope_upgrade":{"mode":"incremental","params":{"include_granted_scopes":"true"}}"#
        let s = try Setup(
            provider: provider,
            broker: BrokerHarness(
                providersJSON: "{\"providers\": {\(provider.providerEntry(extra: upgrade))}}",
                environment: ["FAKE_ACME_SECRET": Self.clientSecret, "BROKER_REFRESH_INTERVAL": "0"]))
        let plain = try #require(await s.browser.authorize("provider=acme&scopes=read"))
        #expect(plain.header("Location")?.contains("include_granted_scopes") == false)
        #expect(try await s.connect(scopes: #"["read"]"#).status == 200)
        let refused = try await s.get("/account?id=acme:4242&scopes=write")
        let url = try #require(refused.json["authorize_url"] as? String)
        #expect(url.contains("include_granted_scopes=true"))
        #expect(try await s.complete(url).status == 200)
        #expect(try await s.get("/account?id=acme:4242&scopes=read,write").status == 200)
        // The presets say how their providers add scopes.
        func presetUpgrade(_ name: String) -> ScopeUpgrade? { ProviderPresets.preset(named: name, environment: [:])?.scopeUpgrade }
        #expect(presetUpgrade("google")?.mode == .incremental)
        #expect(presetUpgrade("google")?.parameters.contains { $0 == ("include_granted_scopes", "true") } == true)
        #expect(presetUpgrade("microsoft")?.mode == .additive)
        #expect(presetUpgrade("slack")?.mode == .additive)
        #expect(presetUpgrade("github")?.mode == .reconsent)
    }

    /// A broker on `redis` (built with ``Broker/make(configuration:logger:upstream:clients:now:)``, as a broker on
    /// Redis must be), listening on 127.0.0.1, for the fake `provider`.
    static func redisBroker(_ provider: FakeOAuth2Provider, redis: RedisServer, root: String, name: String) async throws -> Broker {
        let providersPath = root + "/providers.json"
        try Data("{\"providers\": {\(provider.providerEntry)}}".utf8).write(to: URL(fileURLWithPath: providersPath))
        let configuration = try BrokerConfiguration.from(environment: [
            "BROKER_PORT": "0", "BROKER_DATA_DIR": root + "/" + name, "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
            "BROKER_PROVIDERS_FILE": providersPath, "BROKER_API_KEY": BrokerHarness.apiKey, "FAKE_ACME_SECRET": clientSecret,
            "BROKER_REFRESH_INTERVAL": "0", "BROKER_UPSTREAM_TIMEOUT": "120",
            "BROKER_ENCRYPTION_KEY": "k1:" + Data((0..<32).map { UInt8($0 &* 7 &+ 3) }).base64EncodedString(),
            "BROKER_SECRET": "shared-cookie-secret-shared-cookie-secret",
        ])
        let fd = open(root + "/" + name + ".log", O_CREAT | O_WRONLY | O_APPEND, 0o600)
        let broker = try await Broker.make(configuration: configuration, logger: BrokerLogger(format: .json, writer: LogWriter(fd: fd)))
        try broker.start()
        return broker
    }

    @Test func scopesSurviveARestartOnRedis() async throws {
        let redis = try await RedisServer.scoped(persistent: true)
        let root = try TemporaryDirectory.scoped(prefix: "scopes-redis")
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: Self.clientSecret))
        let first = try await Self.redisBroker(provider, redis: redis, root: root, name: "a")
        let body = #"{"provider":"acme","scopes":["read","write"]}"#
        let started = try #require(
            await TestHTTP.send(port: first.port, method: "POST", target: "/authorize", headers: Self.apiJSON, body: body))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(started.body.utf8)) as? [String: Any])
        let browser = Browser(brokerPort: first.port, providerPort: provider.port)
        let url = try #require(json["authorize_url"] as? String)
        let callback = try #require(await browser.visitProvider(url))
        let completed = try #require(await browser.get(callback, headers: [("Accept", "application/json")]))
        #expect(completed.status == 200)
        await first.shutdown()
        let again = try await Self.redisBroker(provider, redis: redis, root: root, name: "b")
        let reply = try #require(await TestHTTP.send(port: again.port, target: "/account?id=acme:4242&scopes=read", headers: Self.api))
        await again.shutdown()
        #expect(reply.status == 200)
        let account = try #require(try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any])
        #expect(account["scopes"] as? [String] == ["read", "write"])
    }
}
