import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerApp

/// End to end over real sockets: browser → broker → fake Weibo → broker, then `/account` with curl's eyes.
@Suite(.scoped) struct WeiboFlowTests {
    static let clientSecret = "WEIBO-CLIENT-SECRET-SENTINEL-0123456789"

    struct Setup {
        let weibo: FakeOAuth2Provider
        let broker: BrokerHarness
        var browser: Browser { Browser(brokerPort: broker.port, providerPort: weibo.port) }
    }

    static func setUp(
        now: @escaping @Sendable () -> Date = { Date() }, dataDirectory: String? = nil,
        environment extra: [String: String] = [:]
    ) throws -> Setup {
        let weibo = try FakeOAuth2Provider.scoped(.weibo(clientSecret: clientSecret))
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(weibo.providerEntry)}}",
            environment: ["FAKE_WEIBO_SECRET": clientSecret].merging(extra) { $1 },
            dataDirectory: dataDirectory, now: now)
        return Setup(weibo: weibo, broker: broker)
    }

    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    @Test func happyPathStoresTheAccountAndHandsTheTokenOnlyToWhoMayHaveIt() async throws {
        let s = try Self.setUp()
        let browser = s.browser
        let start = try #require(await browser.authorize("provider=weibo"))
        #expect(start.status == 302)
        let location = try #require(start.header("Location").flatMap(URLComponents.init(string:)))
        let items = Dictionary(uniqueKeysWithValues: (location.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(location.path == "/oauth2/authorize")
        #expect(items["client_id"] == "1234567890")
        #expect(items["redirect_uri"] == "http://localhost:8080/callback")
        #expect(items["response_type"] == "code")
        #expect((items["state"]?.count ?? 0) >= 22)
        #expect(items["code_challenge"] == nil)
        let flowCookie = try #require(start.headers("Set-Cookie").first { $0.hasPrefix("tb_flow=") })
        #expect(flowCookie.contains("HttpOnly") && flowCookie.contains("SameSite=Lax") && flowCookie.contains("Path=/callback"))
        #expect(flowCookie.contains("Max-Age=600"))

        let callbackTarget = try #require(await browser.visitProvider(start.header("Location")!))
        let done = try #require(await browser.get(callbackTarget))
        #expect(done.status == 200)
        #expect(done.body.contains("\"id\":\"weibo:3733034601\""))
        #expect(!done.body.contains("WEIBO-TOKEN-SENTINEL"))
        #expect(done.header("Cache-Control") == "no-store")
        #expect(done.header("Referrer-Policy") == "no-referrer")
        #expect(browser.jar.cookies["tb_flow"] == nil)
        #expect(browser.jar.cookies["tb_session"] != nil)

        let mine = try #require(await browser.get("/account?id=weibo:3733034601"))
        #expect(mine.status == 200)
        #expect(mine.body.contains("\"access_token\":\"2.00WEIBO-TOKEN-SENTINEL"))
        #expect(mine.body.contains("\"provider\":\"weibo\""))
        #expect(!mine.body.contains("refresh_token"))
        #expect(mine.header("Cache-Control") == "no-store")
        let byUID = await TestHTTP.send(port: s.broker.port, target: "/account?provider=weibo&uid=3733034601", headers: Self.api)
        #expect(byUID?.status == 200)
        #expect(await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:3733034601")?.status == 401)
        let stranger = Browser(brokerPort: s.broker.port, providerPort: s.weibo.port)
        #expect(await stranger.get("/account?id=weibo:3733034601")?.status == 401)
        let wrongKey = await TestHTTP.send(
            port: s.broker.port, target: "/account?id=weibo:3733034601",
            headers: [("Authorization", "Bearer wrong-key-wrong-key-wrong")])
        #expect(wrongKey?.status == 401)
        #expect(await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:404", headers: Self.api)?.status == 404)
        #expect(s.weibo.tokenCalls == 1)
        // At rest the token is sealed (ChaCha20-Poly1305): no plaintext anywhere under the data directory.
        let stored = s.broker.dataDirectoryText()
        #expect(stored.contains("weibo:3733034601") && stored.contains("chacha20-poly1305"))
        #expect(!stored.contains("WEIBO-TOKEN-SENTINEL"))
    }

    @Test func reauthorizingUpdatesTheSameRecord() async throws {
        let clock = TestClock(Date())
        let s = try Self.setUp(now: clock.function)
        #expect(await s.browser.connect(provider: "weibo")?.status == 200)
        let first = try #require(await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:3733034601", headers: Self.api))
        clock.advance(2)
        #expect(await s.browser.connect(provider: "weibo")?.status == 200)
        let second = try #require(await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:3733034601", headers: Self.api))
        func field(_ body: String, _ name: String) -> String? {
            guard let r = body.range(of: "\"\(name)\":\"") else { return nil }
            return String(body[r.upperBound...].prefix { $0 != "\"" })
        }
        #expect(field(first.body, "created_at") == field(second.body, "created_at"))
        #expect(field(first.body, "updated_at") != field(second.body, "updated_at"))
        #expect(field(first.body, "access_token") != field(second.body, "access_token"))
        let list = try #require(await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: Self.api))
        #expect(list.body.components(separatedBy: "\"id\":").count == 2)
        #expect(!list.body.contains("TOKEN-SENTINEL"))
    }

    @Test func denialIs403AndNoTokenCall() async throws {
        let s = try Self.setUp()
        s.weibo.set { $0.deny = true }
        let reply = try #require(await s.browser.connect(provider: "weibo"))
        #expect(reply.status == 403)
        #expect(reply.body.contains("\"error\":\"access_denied\""))
        #expect(s.weibo.tokenCalls == 0)
    }

    @Test func replayedTamperedAndForeignStatesNeverReachTheProvider() async throws {
        let s = try Self.setUp()
        let browser = s.browser
        let start = try #require(await browser.authorize("provider=weibo"))
        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        // Another browser (no flow cookie) presents the callback: rejected, no exchange.
        let foreign = Browser(brokerPort: s.broker.port, providerPort: s.weibo.port)
        #expect(await foreign.get(callback)?.status == 400)
        #expect(s.weibo.tokenCalls == 0)

        let again = try #require(await browser.authorize("provider=weibo"))
        let callback2 = try #require(await browser.visitProvider(again.header("Location")!))
        let tampered = callback2.replacingOccurrences(of: "state=", with: "state=x")
        let bad = try #require(await browser.get(tampered))
        #expect(bad.status == 400)
        #expect(bad.body.contains("\"error\":\"invalid_state\""))
        #expect(s.weibo.tokenCalls == 0)

        let third = try #require(await browser.authorize("provider=weibo"))
        let callback3 = try #require(await browser.visitProvider(third.header("Location")!))
        let savedCookies = browser.jar.cookies
        #expect(await browser.get(callback3)?.status == 200)
        #expect(s.weibo.tokenCalls == 1)
        // Replay with the same cookies: the state was single use.
        let replay = await TestHTTP.send(
            port: s.broker.port, target: callback3,
            headers: [("Cookie", savedCookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))])
        #expect(replay?.status == 400)
        #expect(s.weibo.tokenCalls == 1)
    }

    @Test func anAllowedReturnToGetsTheAccountIDAndTheState() async throws {
        let s = try Self.setUp()
        let browser = s.browser
        let start = try #require(
            await browser.authorize("provider=weibo&return_to=https%3A%2F%2Fapp.example.com%2Fdone%3Fx%3D1"))
        let location = try #require(start.header("Location"))
        let state = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "state" }?.value)
        let callback = try #require(await browser.visitProvider(location))
        let reply = try #require(await browser.get(callback))
        #expect(reply.status == 302)
        #expect(reply.header("Location") == "https://app.example.com/done?x=1&account=weibo%3A3733034601&state=\(state)")
    }

    /// A provider fault: a wrong answer, or none at all (the exchange held until the broker's 2 s timeout has cut
    /// the call; only that case has a short timeout, so a loaded machine's slow answers are never taken for it).
    @Test(arguments: [
        (FakeOAuth2Provider.Failure?.some(.serverError), false, "upstream_error", 502), (.html, false, "upstream_error", 502),
        (.empty, false, "upstream_error", 502), (.invalidGrant, false, "upstream_error", 502),
        (.noAccessToken, false, "upstream_error", 502), (.errorIn200, false, "upstream_error", 502),
        (nil, true, "upstream_timeout", 504),
    ])
    func upstreamFaultsAreReportedAndNothingIsStored(failure: FakeOAuth2Provider.Failure?, held: Bool, code: String, status: Int)
        async throws
    {
        let s = try Self.setUp(environment: held ? ["BROKER_UPSTREAM_TIMEOUT": "2"] : [:])
        s.weibo.set {
            $0.exchangeFailure = failure
            $0.exchangeHeld = held
        }
        let reply = try #require(await s.browser.connect(provider: "weibo"))
        s.weibo.set { $0.exchangeHeld = false }
        // A 504 for the held exchange shows the broker cut the call: waiting would have got its 200.
        #expect(reply.status == status)
        #expect(reply.body.contains("\"error\":\"\(code)\""))
        #expect(!reply.body.contains("SENTINEL"))
        let list = await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: Self.api)
        #expect(list?.body == "{\"accounts\":[],\"next_cursor\":null}")
        #expect(!s.broker.log.contains("SENTINEL"))
    }

    @Test func anExpiredAccountIs410AndTheRecordStays() async throws {
        let clock = TestClock(Date())
        let s = try Self.setUp(now: clock.function)
        s.weibo.set { $0.accessTokenLifetime = 60 }
        #expect(await s.browser.connect(provider: "weibo")?.status == 200)
        #expect(await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:3733034601", headers: Self.api)?.status == 200)
        clock.advance(61)
        let expired = try #require(await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:3733034601", headers: Self.api))
        #expect(expired.status == 410)
        #expect(expired.body.contains("\"error\":\"expired\""))
        #expect(!expired.body.contains("SENTINEL"))
        let list = await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: Self.api)
        #expect(list?.body.contains("weibo:3733034601") == true)
    }

    @Test func accountsSurviveARestart() async throws {
        let s = try Self.setUp()
        #expect(await s.browser.connect(provider: "weibo")?.status == 200)
        await s.broker.stop()
        let again = try Self.setUp(dataDirectory: s.broker.dataDirectory)
        let reply = await TestHTTP.send(port: again.broker.port, target: "/account?id=weibo:3733034601", headers: Self.api)
        #expect(reply?.status == 200)
        #expect(reply?.body.contains("WEIBO-TOKEN-SENTINEL") == true)
    }

    @Test func deleteRevokesAtWeiboAndRemovesTheRecord() async throws {
        let s = try Self.setUp()
        #expect(await s.browser.connect(provider: "weibo")?.status == 200)
        let deleted = await TestHTTP.send(port: s.broker.port, method: "DELETE", target: "/account?id=weibo:3733034601", headers: Self.api)
        #expect(deleted?.status == 204)
        #expect(s.weibo.revokeCalls == 1)
        #expect(await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:3733034601", headers: Self.api)?.status == 404)
    }

    @Test func noSecretReachesTheLogsAfterEveryFlow() async throws {
        let s = try Self.setUp()
        #expect(await s.browser.connect(provider: "weibo")?.status == 200)
        s.weibo.set { $0.exchangeFailure = .invalidGrant }
        let failed = await s.browser.connect(provider: "weibo")
        #expect(failed?.status == 502, "got \(String(describing: failed?.status)): \(failed?.body ?? "")")
        _ = await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:3733034601", headers: Self.api)
        _ = await TestHTTP.send(port: s.broker.port, method: "DELETE", target: "/account?id=weibo:3733034601", headers: Self.api)
        let log = s.broker.log
        #expect(log.contains("callback ok"))
        for sentinel in ["SENTINEL", BrokerHarness.apiKey, "code=", "state="] {
            #expect(!log.contains(sentinel), "log contains \(sentinel)")
        }
    }
}

/// The API key's scheme is case-insensitive (RFC 9110 §11.1); anything else about it is exact.
@Suite(.scoped) struct APIKeySchemeTests {
    @Test(arguments: [("Bearer", 200), ("bearer", 200), ("BEARER", 200), ("Basic", 401), ("Bearer ", 401), ("Bearerx", 401)])
    func schemeSpellings(scheme: String, status: Int) async throws {
        let s = try WeiboFlowTests.setUp()
        #expect(await s.browser.connect(provider: "weibo")?.status == 200)
        let reply = await TestHTTP.send(
            port: s.broker.port, target: "/account?id=weibo:3733034601",
            headers: [("Authorization", scheme + " " + BrokerHarness.apiKey)])
        #expect(reply?.status == status)
    }
}
