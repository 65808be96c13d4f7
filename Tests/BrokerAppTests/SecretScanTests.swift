import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every flow of the real executable run with sentinel secrets; then stdout, stderr, every
/// response body and `Location` header, and the data directory are searched for them.
/// Also: no-store and no-referrer headers, and API key look-alikes refused.
@Suite(.serialized, .scoped) struct SecretScanTests {
    static let weiboSecret = "WEIBO-CLIENT-SECRET-SENTINEL-scan-0123456789"
    static let acmeSecret = "ACME-CLIENT-SECRET-SENTINEL-scan-0123456789"
    static let apiKey = "API-KEY-SENTINEL-scan-0123456789abcdef"
    static let cookieSecret = "COOKIE-SECRET-SENTINEL-scan-0123456789abcdef"
    static let encryptionKey = Data((0..<32).map { UInt8(0xA0 + $0 % 16) }).base64EncodedString()

    /// What the broker showed the outside world, apart from the one response meant to carry a token.
    final class Transcript: @unchecked Sendable {
        // @unchecked: appended to by one test task at a time.
        var exposed: [String] = []
        var replies: [(what: String, reply: TestHTTP.Reply)] = []
        func record(_ what: String, _ reply: TestHTTP.Reply?) -> TestHTTP.Reply? {
            guard let reply else { exposed.append("\(what): no reply"); return nil }
            replies.append((what, reply))
            exposed.append(reply.body)
            exposed.append(contentsOf: reply.headers("Location"))
            return reply
        }
    }

    @Test func noSentinelSecretLeavesTheBrokerExceptInTheAccountResponse() async throws {
        let weibo = try FakeOAuth2Provider.scoped(.weibo(clientSecret: Self.weiboSecret))
        // Acme requires PKCE, issues refresh tokens, and can answer with an error that echoes the code and verifier.
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: Self.acmeSecret, clientID: "acme-client")
        configuration.pkce = .required
        configuration.login = "octo"
        var behaviour = FakeOAuth2Provider.Behaviour(dialect: .rfc6749)
        behaviour.users = .fixed("42")
        let acme = try FakeOAuth2Provider.scoped(configuration, behaviour: behaviour)
        let root = try TemporaryDirectory.scoped(prefix: "broker-scan")
        let broker = try await Self.startBroker(root: root, weibo: weibo, acme: acme)
        let port = broker.port
        let t = Transcript()
        let api = [("Authorization", "Bearer " + Self.apiKey)]

        // Weibo, browser: success, return_to, denial, provider faults (invalid_grant echoes the code), replay.
        let browser = Browser(brokerPort: port, providerPort: weibo.port)
        #expect(t.record("weibo callback", await browser.connect(provider: "weibo"))?.status == 200)
        #expect(
            t.record(
                "weibo return_to",
                await browser.connect(
                    provider: "weibo",
                    extra: "&return_to=https%3A%2F%2Fapp.example.com%2Fdone"))?.status == 302)
        weibo.set { $0.deny = true }
        #expect(t.record("weibo denied", await browser.connect(provider: "weibo"))?.status == 403)
        weibo.set { $0.deny = false }
        for mode in [FakeOAuth2Provider.Failure.invalidGrant, .errorIn200, .html, .noAccessToken] {
            weibo.set { $0.exchangeFailure = mode }
            #expect(t.record("weibo \(mode)", await browser.connect(provider: "weibo"))?.status == 502)
        }
        weibo.set { $0.exchangeFailure = nil }
        let start = try #require(t.record("weibo authorize", await browser.authorize("provider=weibo")))
        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        let cookies = browser.jar.header
        #expect(t.record("weibo callback", await browser.get(callback))?.status == 200)
        #expect(t.record("weibo replay", await TestHTTP.send(port: port, target: callback, headers: cookies))?.status == 400)

        // Acme: PKCE, refresh tokens, a token endpoint that echoes the code and verifier in its error.
        let acmeBrowser = Browser(brokerPort: port, providerPort: acme.port)
        #expect(t.record("acme callback", await acmeBrowser.connect(provider: "acme"))?.status == 200)
        acme.set { $0.exchangeFailure = .echoingError }
        #expect(t.record("acme echoing error", await acmeBrowser.connect(provider: "acme"))?.status == 502)
        let apiStart = try #require(
            t.record(
                "acme API authorize",
                await TestHTTP.send(
                    port: port, method: "POST", target: "/authorize",
                    headers: api + [("Content-Type", "application/x-www-form-urlencoded")],
                    body: "provider=acme")))
        #expect(apiStart.status == 200)

        // Reading and deleting: the token response is the only place a token may appear.
        let token = try #require(await acmeBrowser.get("/account?id=acme:42"))
        #expect(token.status == 200 && token.body.contains(acme.accessTokens.first ?? "-"))
        #expect(t.record("accounts", await TestHTTP.send(port: port, target: "/accounts", headers: api))?.status == 200)
        #expect(
            t.record(
                "wrong key",
                await TestHTTP.send(
                    port: port, target: "/accounts",
                    headers: [("Authorization", "Bearer " + Self.apiKey + "x")]))?.status == 401)
        #expect(
            t.record("delete", await TestHTTP.send(port: port, method: "DELETE", target: "/account?id=acme:42", headers: api))?.status
                == 204)
        _ = t.record("deleted", await TestHTTP.send(port: port, target: "/account?id=acme:42", headers: api))

        broker.signal(SIGTERM)
        #expect(await broker.waitForExit(timeout: 60) == 0)
        let data = Self.text(under: root + "/data")
        let sessionCookies = [browser.jar.cookies["tb_session"], acmeBrowser.jar.cookies["tb_session"]].compactMap { $0 }
        var sentinels = [
            Self.weiboSecret, Self.acmeSecret, Self.apiKey, Self.cookieSecret, Self.encryptionKey,
            "WEIBO-TOKEN-SENTINEL", "WEIBO-CODE-SENTINEL", "ACME-ACCESS-SENTINEL", "ACME-REFRESH-SENTINEL", "ACME-CODE-SENTINEL",
        ]
        let verifiers = acme.ledger.verifiers
        sentinels += verifiers + sessionCookies
        #expect(verifiers.count == 2 && sessionCookies.count == 2)
        #expect(broker.log.contains("callback ok"))
        #expect(data.contains("chacha20-poly1305"))
        let audit = (try? String(contentsOfFile: root + "/data/audit.jsonl", encoding: .utf8)) ?? ""
        #expect(audit.contains("\"event\":\"flow_completed\"") && audit.contains("\"event\":\"account_deleted\""))
        for sentinel in sentinels {
            #expect(!broker.stdout.contains(sentinel), "stdout holds \(sentinel.prefix(12))…")
            #expect(!broker.log.contains(sentinel), "stderr holds \(sentinel.prefix(12))…")
            #expect(!t.exposed.contains { $0.contains(sentinel) }, "a response holds \(sentinel.prefix(12))…")
            #expect(!data.contains(sentinel), "the data directory holds \(sentinel.prefix(12))… in plaintext")
        }
        // Neither the state nor the code of a callback URL reaches the logs.
        #expect(!broker.log.contains("state=") && !broker.log.contains("code="))
    }

    @Test func tokenBearingAndCallbackResponsesAreNeitherCachedNorReferred() async throws {
        let weibo = try FakeOAuth2Provider.scoped(.weibo(clientSecret: Self.weiboSecret))
        let harness = try BrokerHarness(
            providersJSON: "{\"providers\": {\(weibo.providerEntry)}}",
            environment: ["FAKE_WEIBO_SECRET": Self.weiboSecret])
        let browser = Browser(brokerPort: harness.port, providerPort: weibo.port)
        let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
        var replies: [(String, TestHTTP.Reply?)] = []
        replies.append(("authorize", await browser.authorize("provider=weibo")))
        replies.append(("callback 200", await browser.connect(provider: "weibo")))
        replies.append(("callback 302", await browser.connect(provider: "weibo", extra: "&return_to=https%3A%2F%2Fapp.example.com%2F")))
        replies.append(("callback 400", await TestHTTP.send(port: harness.port, target: "/callback?code=x&state=AAAAAAAAAAAAAAAAAAAAAA")))
        weibo.set { $0.deny = true }
        replies.append(("callback 403", await browser.connect(provider: "weibo")))
        weibo.set {
            $0.deny = false; $0.exchangeFailure = .serverError
        }
        replies.append(("callback 502", await browser.connect(provider: "weibo")))
        replies.append(("account", await browser.get("/account?id=weibo:3733034601")))
        replies.append(("account by key", await TestHTTP.send(port: harness.port, target: "/account?id=weibo:3733034601", headers: api)))
        replies.append(("accounts", await TestHTTP.send(port: harness.port, target: "/accounts", headers: api)))
        replies.append(
            (
                "API authorize",
                await TestHTTP.send(
                    port: harness.port, method: "POST", target: "/authorize",
                    headers: api + [("Content-Type", "application/x-www-form-urlencoded")],
                    body: "provider=weibo")
            ))
        for (what, reply) in replies {
            let reply = try #require(reply, "\(what): no reply")
            #expect(reply.header("Cache-Control") == "no-store", "\(what) \(reply.status)")
            if what.hasPrefix("callback") || what.hasPrefix("authorize") {
                #expect(reply.header("Referrer-Policy") == "no-referrer", "\(what) \(reply.status)")
            }
        }
        #expect(replies.map { $0.1?.status ?? 0 } == [302, 200, 302, 400, 403, 502, 200, 200, 200, 200])
    }

    // MARK: Fixtures

    static func startBroker(root: String, weibo: FakeOAuth2Provider, acme: FakeOAuth2Provider) async throws -> BrokerProcess {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let providers = root + "/providers.json"
        let file = """
            {"providers": {\(weibo.providerEntry),
              \(acme.providerEntry(secretVariable: "ACME_SECRET", extra: "\"scopes\": [\"read\"]"))}}
            """
        try Data(file.utf8).write(to: URL(fileURLWithPath: providers))
        return try await BrokerProcess.start(environment: [
            "BROKER_DATA_DIR": root + "/data", "BROKER_PROVIDERS_FILE": providers, "BROKER_API_KEY": apiKey,
            "BROKER_SECRET": cookieSecret, "BROKER_ENCRYPTION_KEY": "k1:" + encryptionKey,
            "FAKE_WEIBO_SECRET": weiboSecret, "ACME_SECRET": acmeSecret, "BROKER_UPSTREAM_TIMEOUT": "120",
            "BROKER_RETURN_TO_ALLOWLIST": "https://app.example.com",
            // Inside the data directory, so the scan below covers the audit trail too.
            "BROKER_AUDIT_LOG": root + "/data/audit.jsonl",
        ])
    }

    /// Every file under `path`, concatenated as text.
    static func text(under path: String) -> String {
        var all = ""
        let enumerator = FileManager.default.enumerator(atPath: path)
        while let item = enumerator?.nextObject() as? String {
            if let data = FileManager.default.contents(atPath: path + "/" + item) { all += String(decoding: data, as: UTF8.self) }
        }
        return all
    }
}
