#if canImport(Glibc)
import Glibc
#endif
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

/// Every flow of the real executable run with sentinel secrets; then stdout, stderr, every
/// response body and `Location` header, and the data directory are searched for them.
/// Also: no-store and no-referrer headers, and API key look-alikes refused.
@Suite(.serialized) struct SecretScanTests {
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
        let weibo = try FakeWeibo(clientSecret: Self.weiboSecret)
        let acme = try SentinelProvider(clientSecret: Self.acmeSecret)
        let root = NSTemporaryDirectory() + "broker-scan-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let broker = try await Self.offPool { try Self.startBroker(root: root, weibo: weibo, acme: acme) }
        let port = broker.port
        let t = Transcript()
        let api = [("Authorization", "Bearer " + Self.apiKey)]

        // Weibo, browser: success, return_to, denial, provider faults (invalid_grant echoes the code), replay.
        let browser = Browser(brokerPort: port, providerPort: weibo.server.port)
        #expect(t.record("weibo callback", await browser.connect(provider: "weibo"))?.status == 200)
        #expect(t.record("weibo return_to", await browser.connect(provider: "weibo",
                                                                 extra: "&return_to=https%3A%2F%2Fapp.example.com%2Fdone"))?.status == 302)
        weibo.set { $0.deny = true }
        #expect(t.record("weibo denied", await browser.connect(provider: "weibo"))?.status == 403)
        weibo.set { $0.deny = false }
        for mode in [FakeWeibo.TokenMode.invalidGrant, .errorIn200, .html, .noAccessToken] {
            weibo.set { $0.mode = mode }
            #expect(t.record("weibo \(mode)", await browser.connect(provider: "weibo"))?.status == 502)
        }
        weibo.set { $0.mode = .ok }
        let start = try #require(t.record("weibo authorize", await browser.authorize("provider=weibo")))
        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        let cookies = browser.jar.header
        #expect(t.record("weibo callback", await browser.get(callback))?.status == 200)
        #expect(t.record("weibo replay", await TestHTTP.send(port: port, target: callback, headers: cookies))?.status == 400)

        // Acme: PKCE, refresh tokens, a token endpoint that echoes the code and verifier in its error.
        let acmeBrowser = Browser(brokerPort: port, providerPort: acme.server.port)
        #expect(t.record("acme callback", await acmeBrowser.connect(provider: "acme"))?.status == 200)
        acme.failNext()
        #expect(t.record("acme echoing error", await acmeBrowser.connect(provider: "acme"))?.status == 502)
        let apiStart = try #require(t.record("acme API authorize", await TestHTTP.send(
            port: port, method: "POST", target: "/authorize", headers: api + [("Content-Type", "application/x-www-form-urlencoded")],
            body: "provider=acme")))
        #expect(apiStart.status == 200)

        // Reading and deleting: the token response is the only place a token may appear.
        let token = try #require(await acmeBrowser.get("/account?id=acme:42"))
        #expect(token.status == 200 && token.body.contains(acme.accessTokens.first ?? "-"))
        #expect(t.record("accounts", await TestHTTP.send(port: port, target: "/accounts", headers: api))?.status == 200)
        #expect(t.record("wrong key", await TestHTTP.send(port: port, target: "/accounts",
                                                          headers: [("Authorization", "Bearer " + Self.apiKey + "x")]))?.status == 401)
        #expect(t.record("delete", await TestHTTP.send(port: port, method: "DELETE", target: "/account?id=acme:42", headers: api))?.status == 204)
        _ = t.record("deleted", await TestHTTP.send(port: port, target: "/account?id=acme:42", headers: api))

        broker.signal(SIGTERM)
        #expect(try await Self.offPool { broker.waitForExit(timeout: 10) } == 0)
        let data = Self.text(under: root + "/data")
        let sessionCookies = [browser.jar.cookies["tb_session"], acmeBrowser.jar.cookies["tb_session"]].compactMap { $0 }
        var sentinels = [Self.weiboSecret, Self.acmeSecret, Self.apiKey, Self.cookieSecret, Self.encryptionKey,
                         "WEIBO-TOKEN-SENTINEL", "WEIBO-CODE-SENTINEL", "ACME-TOKEN-SENTINEL", "ACME-REFRESH-SENTINEL", "ACME-CODE-SENTINEL"]
        sentinels += acme.verifiers + sessionCookies
        #expect(acme.verifiers.count == 2 && sessionCookies.count == 2)
        #expect(broker.stderr.contains("callback ok"))
        #expect(data.contains("chacha20-poly1305"))
        for sentinel in sentinels {
            #expect(!broker.stdout.contains(sentinel), "stdout holds \(sentinel.prefix(12))…")
            #expect(!broker.stderr.contains(sentinel), "stderr holds \(sentinel.prefix(12))…")
            #expect(!t.exposed.contains { $0.contains(sentinel) }, "a response holds \(sentinel.prefix(12))…")
            #expect(!data.contains(sentinel), "the data directory holds \(sentinel.prefix(12))… in plaintext")
        }
        // Neither the state nor the code of a callback URL reaches the logs.
        #expect(!broker.stderr.contains("state=") && !broker.stderr.contains("code="))
    }

    @Test func tokenBearingAndCallbackResponsesAreNeitherCachedNorReferred() async throws {
        let weibo = try FakeWeibo(clientSecret: Self.weiboSecret)
        let harness = try BrokerHarness(providersJSON: "{\"providers\": {\(weibo.providerEntry)}}",
                                        environment: ["FAKE_WEIBO_SECRET": Self.weiboSecret])
        let browser = Browser(brokerPort: harness.port, providerPort: weibo.server.port)
        let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
        var replies: [(String, TestHTTP.Reply?)] = []
        replies.append(("authorize", await browser.authorize("provider=weibo")))
        replies.append(("callback 200", await browser.connect(provider: "weibo")))
        replies.append(("callback 302", await browser.connect(provider: "weibo", extra: "&return_to=https%3A%2F%2Fapp.example.com%2F")))
        replies.append(("callback 400", await TestHTTP.send(port: harness.port, target: "/callback?code=x&state=AAAAAAAAAAAAAAAAAAAAAA")))
        weibo.set { $0.deny = true }
        replies.append(("callback 403", await browser.connect(provider: "weibo")))
        weibo.set { $0.deny = false; $0.mode = .http500 }
        replies.append(("callback 502", await browser.connect(provider: "weibo")))
        replies.append(("account", await browser.get("/account?id=weibo:3733034601")))
        replies.append(("account by key", await TestHTTP.send(port: harness.port, target: "/account?id=weibo:3733034601", headers: api)))
        replies.append(("accounts", await TestHTTP.send(port: harness.port, target: "/accounts", headers: api)))
        replies.append(("API authorize", await TestHTTP.send(port: harness.port, method: "POST", target: "/authorize",
                                                             headers: api + [("Content-Type", "application/x-www-form-urlencoded")],
                                                             body: "provider=weibo")))
        for (what, reply) in replies {
            let reply = try #require(reply, "\(what): no reply")
            #expect(reply.header("Cache-Control") == "no-store", "\(what) \(reply.status)")
            if what.hasPrefix("callback") || what.hasPrefix("authorize") {
                #expect(reply.header("Referrer-Policy") == "no-referrer", "\(what) \(reply.status)")
            }
        }
        #expect(replies.map { $0.1?.status ?? 0 } == [302, 200, 302, 400, 403, 502, 200, 200, 200, 200])
        await harness.stop()
    }

    @Test(arguments: [
        "", " ", "x", String(BrokerHarness.apiKey.dropLast()), BrokerHarness.apiKey + "0", BrokerHarness.apiKey.uppercased(),
        " " + BrokerHarness.apiKey, String(BrokerHarness.apiKey.prefix(8)), String(repeating: "a", count: 4096),
    ])
    func apiKeyLookAlikesAreRefused(presented: String) async throws {
        let weibo = try FakeWeibo(clientSecret: Self.weiboSecret)
        let harness = try BrokerHarness(providersJSON: "{\"providers\": {\(weibo.providerEntry)}}",
                                        environment: ["FAKE_WEIBO_SECRET": Self.weiboSecret])
        let reply = await TestHTTP.send(port: harness.port, target: "/accounts", headers: [("Authorization", "Bearer " + presented)])
        #expect(reply?.status == 401)
        #expect(await TestHTTP.send(port: harness.port, target: "/accounts",
                                    headers: [("Authorization", "bearer " + BrokerHarness.apiKey)])?.status == 200)
        await harness.stop()
    }

    // MARK: Fixtures

    /// Runs blocking work (waiting for a process) on a thread of its own, never on Swift's cooperative pool,
    /// where it would hold back the in-process brokers of tests running alongside.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    static func startBroker(root: String, weibo: FakeWeibo, acme: SentinelProvider) throws -> LiveBroker {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let providers = root + "/providers.json"
        let file = """
            {"providers": {\(weibo.providerEntry),
              "acme": {"kind": "oauth2", "client_id": "acme-client", "client_secret": "${ACME_SECRET}", "pkce": true,
                       "authorize_url": "\(acme.base)/authorize", "token_url": "\(acme.base)/token",
                       "user_url": "\(acme.base)/user", "revoke_url": "\(acme.base)/revoke", "scopes": ["read"]}}}
            """
        try Data(file.utf8).write(to: URL(fileURLWithPath: providers))
        return try LiveBroker(environment: [
            "BROKER_DATA_DIR": root + "/data", "BROKER_PROVIDERS_FILE": providers, "BROKER_API_KEY": apiKey,
            "BROKER_SECRET": cookieSecret, "BROKER_ENCRYPTION_KEY": "k1:" + encryptionKey,
            "FAKE_WEIBO_SECRET": weiboSecret, "ACME_SECRET": acmeSecret, "BROKER_UPSTREAM_TIMEOUT": "3",
            "BROKER_RETURN_TO_ALLOWLIST": "https://app.example.com",
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

    /// The `token-broker` executable with stdout and stderr each captured.
    ///
    /// `@unchecked Sendable`: `port` is set once in `init`; the output buffers lock themselves.
    final class LiveBroker: @unchecked Sendable {
        let process = Process()
        private let out = LockedBuffer()
        private let err = LockedBuffer()
        private(set) var port = 0

        init(environment: [String: String]) throws {
            process.executableURL = BrokerProcess.executable
            process.environment = ["BROKER_PORT": "0", "BROKER_LOG_FORMAT": "json", "PATH": "/usr/bin:/bin"]
                .merging(environment) { $1 }
            let outPipe = Pipe(), errPipe = Pipe()
            process.standardOutput = outPipe
            process.standardError = errPipe
            let (o, e) = (out, err)
            outPipe.fileHandleForReading.readabilityHandler = { o.append($0.availableData) }
            errPipe.fileHandleForReading.readabilityHandler = { e.append($0.availableData) }
            try ProcessLaunch.run(process)
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, process.isRunning {
                if let range = err.text.range(of: "\"port\":"), let p = Int(err.text[range.upperBound...].prefix { $0.isNumber }), p > 0 {
                    port = p
                    return
                }
                usleep(20_000)
            }
            throw BrokerProcessError.didNotStart(err.text)
        }

        var stdout: String { out.text }
        var stderr: String { err.text }
        func signal(_ number: Int32) { kill(process.processIdentifier, number) }
        func waitForExit(timeout: Double) -> Int32? {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            usleep(100_000)  // let the pipe handlers take the last bytes
            return process.isRunning ? nil : process.terminationStatus
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        }
    }

    /// An OAuth 2.0 provider that issues sentinel codes, access and refresh tokens, records each
    /// PKCE verifier it receives, and can fail once with an error that echoes the code and verifier.
    final class SentinelProvider: Sendable {
        struct State {
            var codes: Set<String> = []
            var verifiers: [String] = []
            var accessTokens: [String] = []
            var failNext = false
        }
        /// Holds the state the route closures share.
        final class Box: Sendable { let state = Mutex(State()) }
        let server: HTTPServer
        let box = Box()

        init(clientSecret: String) throws {
            let box = self.box
            var router = Router()
            router.add(.GET, "/authorize", .sync({ request in
                let code = "ACME-CODE-SENTINEL-" + UUID().uuidString
                box.state.withLock { _ = $0.codes.insert(code) }
                let target = (request.query("redirect_uri") ?? "") + "?code=\(code)&state=\(request.query("state") ?? "")"
                return Response(status: .found, headers: HTTPHeaders([("Location", target)]))
            }))
            router.add(.POST, "/token", .sync({ request in
                let form = Dictionary(URLEncodedForm.parse(String(decoding: request.body, as: UTF8.self)).map { ($0.name, $0.value) },
                                      uniquingKeysWith: { a, _ in a })
                let code = form["code"] ?? "", verifier = form["code_verifier"] ?? ""
                let (known, fail) = box.state.withLock { s -> (Bool, Bool) in
                    s.verifiers.append(verifier)
                    defer { s.failNext = false }
                    return (s.codes.remove(code) != nil, s.failNext)
                }
                guard known, !fail, form["client_secret"] == clientSecret, verifier.count >= 43 else {
                    return Response.json(.badRequest, "{\"error\":\"invalid_grant\",\"error_description\":\"code \(code) with verifier \(verifier) and secret \(form["client_secret"] ?? "")\"}")
                }
                let token = "ACME-TOKEN-SENTINEL-" + UUID().uuidString
                box.state.withLock { $0.accessTokens.append(token) }
                return Response.json(.ok, "{\"access_token\":\"\(token)\",\"token_type\":\"Bearer\",\"expires_in\":3600,\"refresh_token\":\"ACME-REFRESH-SENTINEL-\(UUID().uuidString)\",\"scope\":\"read\"}")
            }))
            router.add(.GET, "/user", .sync({ _ in Response.json(.ok, "{\"id\":42,\"login\":\"octo\"}") }))
            router.add(.POST, "/revoke", .sync({ _ in Response(status: .ok) }))
            server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), router: router)
            try server.start()
        }

        var base: String { "http://127.0.0.1:\(server.port)" }
        var verifiers: [String] { box.state.withLock { $0.verifiers } }
        var accessTokens: [String] { box.state.withLock { $0.accessTokens } }
        func failNext() { box.state.withLock { $0.failNext = true } }
    }
}
