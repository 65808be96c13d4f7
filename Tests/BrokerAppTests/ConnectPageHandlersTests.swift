import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerApp

/// The page and its Disconnect over real sockets: broker → fake Weibo → broker, as a browser and as curl.
@Suite(.scoped) struct ConnectPageHandlersTests {
    static let html = [("Accept", ContentNegotiationTests.chrome)]
    static let api = WeiboFlowTests.api
    static let accountID = "weibo:3733034601"

    /// Starts a flow in `browser` and lets the fake provider approve it; returns the `/callback?...` target.
    static func callbackTarget(_ browser: Browser) async throws -> String {
        let start = try #require(await browser.authorize("provider=weibo"))
        let location = try #require(start.header("Location"))
        return try #require(await browser.visitProvider(location))
    }

    /// The whole dance with a browser's Accept on the callback; returns the callback's reply.
    static func connect(_ browser: Browser) async throws -> TestHTTP.Reply {
        let callback = try await callbackTarget(browser)
        return try #require(await browser.get(callback, headers: html))
    }

    static func page(_ browser: Browser) async throws -> TestHTTP.Reply {
        try #require(await browser.get("/", headers: html))
    }

    /// The confirmation page Disconnect leads to for `id`.
    static func confirmation(_ browser: Browser, id: String = accountID) async throws -> TestHTTP.Reply {
        try #require(await browser.get("/disconnect?id=" + id.replacingOccurrences(of: ":", with: "%3A"), headers: html))
    }

    static func csrf(in page: String) -> String? {
        guard let r = page.range(of: "name=\"csrf\" value=\"") else { return nil }
        return String(page[r.upperBound...].prefix { $0 != "\"" })
    }

    static func disconnect(_ browser: Browser, port: Int, body: String) async -> TestHTTP.Reply? {
        let reply = await TestHTTP.send(
            port: port, method: "POST", target: "/disconnect",
            headers: browser.jar.header + html + [("Content-Type", "application/x-www-form-urlencoded")],
            body: body)
        if let reply { browser.jar.absorb(reply) }
        return reply
    }

    static func expectPageHeaders(_ reply: TestHTTP.Reply) {
        #expect(reply.header("Content-Type") == "text/html; charset=utf-8")
        let csp = reply.header("Content-Security-Policy") ?? ""
        for directive in ["default-src 'none'", "style-src 'sha256-", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"] {
            #expect(csp.contains(directive), "CSP lacks \(directive)")
        }
        #expect(!csp.contains("script-src") && !csp.contains("unsafe"))
        #expect(reply.header("Referrer-Policy") == "no-referrer")
        #expect(reply.header("X-Content-Type-Options") == "nosniff")
        #expect(reply.header("X-Frame-Options") == "DENY")
        #expect(reply.header("Cache-Control") == "no-store")
        #expect(!reply.body.contains("SENTINEL"))
    }

    @Test func aNewVisitorSeesTheProvidersAndNoAccount() async throws {
        let s = try WeiboFlowTests.setUp()
        let reply = try await Self.page(s.browser)
        #expect(reply.status == 200)
        Self.expectPageHeaders(reply)
        #expect(reply.body.contains("<h1>token-broker</h1>"))
        #expect(reply.body.contains("href=\"/authorize?provider=weibo\">Connect Weibo</a>"))
        // Presets without credentials are the operator's business, not the visitor's.
        #expect(!reply.body.contains("github") && !reply.body.contains("GitHub") && !reply.body.contains("GITHUB_CLIENT_ID"))
        #expect(!reply.body.contains("disabled"))
        #expect(reply.body.contains("id=\"no-accounts\""))
        #expect(!reply.body.contains("/disconnect"))
        // Curl gets the same page: / is for people whatever they accept.
        #expect(await TestHTTP.send(port: s.broker.port, target: "/")?.header("Content-Type") == "text/html; charset=utf-8")
    }

    @Test func underAPublicPathEveryCookieLinkAndRedirectCarriesThePath() async throws {
        // A proxy serves the broker at /broker and strips the prefix: the broker sees /callback, the browser /broker/callback.
        let s = try WeiboFlowTests.setUp(environment: ["BROKER_PUBLIC_URL": "http://127.0.0.1:8080/broker"])
        let browser = s.browser
        let start = try #require(await browser.authorize("provider=weibo"))
        let flowCookie = try #require(start.headers("Set-Cookie").first { $0.hasPrefix("tb_flow=") })
        #expect(flowCookie.contains("; Path=/broker/callback;"))
        #expect(start.header("Location")?.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fbroker%2Fcallback") == true)
        let location = try #require(start.header("Location"))
        let callback = try #require(await browser.visitProvider(location))
        #expect(callback.hasPrefix("/broker/callback?"))
        let done = try #require(await browser.get(String(callback.dropFirst("/broker".count)), headers: Self.html))
        #expect(done.status == 303)
        #expect(done.header("Location") == "/broker/")
        #expect(done.headers("Set-Cookie").contains { $0.hasPrefix("tb_session=") && $0.contains("; Path=/broker;") })
        #expect(done.headers("Set-Cookie").contains { $0.hasPrefix("tb_flow=;") && $0.contains("; Path=/broker/callback;") })
        let page = try await Self.page(browser)
        #expect(page.body.contains("href=\"/broker/authorize?provider=weibo\""))
        #expect(page.body.contains("href=\"/broker/disconnect?id=weibo%3A3733034601\""))
        #expect(!page.body.contains("href=\"/authorize"))
        let confirm = try await Self.confirmation(browser)
        #expect(confirm.body.contains("action=\"/broker/disconnect\""))
        #expect(confirm.body.contains("<a class=\"button secondary\" href=\"/broker/\">Cancel</a>"))
        let gone = try #require(
            await Self.disconnect(
                browser, port: s.broker.port,
                body: "id=weibo%3A3733034601&csrf=" + (Self.csrf(in: confirm.body) ?? "")))
        #expect(gone.status == 303)
        #expect(gone.header("Location") == "/broker/")
        #expect(gone.headers("Set-Cookie").contains { $0.hasPrefix("tb_notice=") && $0.contains("; Path=/broker;") })
    }

    @Test func aBrowserCallbackReturnsToThePageWhichListsTheAccountOnce() async throws {
        let s = try WeiboFlowTests.setUp()
        s.weibo.set { $0.accessTokenLifetime = 3 * 3600 }
        let browser = s.browser
        let done = try await Self.connect(browser)
        #expect(done.status == 303)
        #expect(done.header("Location") == "/")
        #expect(done.body.isEmpty)
        #expect(browser.jar.cookies["tb_session"] != nil && browser.jar.cookies["tb_notice"] != nil)
        let page = try await Self.page(browser)
        Self.expectPageHeaders(page)
        #expect(page.body.contains("role=\"status\">Connected Weibo account 3733034601.</p>"))
        #expect(page.body.contains("data-account=\"weibo:3733034601\" data-status=\"active\""))
        #expect(page.body.contains("<span class=\"badge active\">active</span> expires in 3 h"))
        #expect(page.body.contains("href=\"/disconnect?id=weibo%3A3733034601\""))
        #expect(browser.jar.cookies["tb_notice"] == nil)
        let again = try await Self.page(browser)
        #expect(!again.body.contains("role=\"status\""))
        #expect(again.body.contains("data-account=\"weibo:3733034601\""))
        // Another browser sees none of it.
        let stranger = try await Self.page(Browser(brokerPort: s.broker.port, providerPort: s.weibo.port))
        #expect(!stranger.body.contains("3733034601"))
    }

    @Test(arguments: [nil, "*/*", "application/json", "application/json, text/html;q=0.1"] as [String?])
    func apiClientsKeepTheJSONOfTheCallback(accept: String?) async throws {
        let s = try WeiboFlowTests.setUp()
        let browser = s.browser
        let callback = try await Self.callbackTarget(browser)
        let done = try #require(await browser.get(callback, headers: accept.map { [("Accept", $0)] } ?? []))
        #expect(done.status == 200)
        #expect(done.header("Content-Type") == "application/json")
        #expect(done.body.contains("\"id\":\"weibo:3733034601\""))
        #expect(done.header("Vary") == "Accept")
    }

    @Test func theStatusFollowsTheInjectedClock() async throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        let s = try WeiboFlowTests.setUp(now: { clock.withLock { $0 } })
        s.weibo.set { $0.accessTokenLifetime = 3 * 3600 }
        let browser = s.browser
        _ = try await Self.connect(browser)
        #expect(try await Self.page(browser).body.contains("</span> expires in 3 h"))
        clock.withLock { $0 = $0.addingTimeInterval(3 * 3600 - 12 * 60) }
        #expect(try await Self.page(browser).body.contains("</span> expires in 12 min"))
        clock.withLock { $0 = $0.addingTimeInterval(12 * 60) }
        let expired = try await Self.page(browser).body
        #expect(expired.contains("data-status=\"expired\""))
        #expect(expired.contains("<span class=\"badge expired\">expired</span>"))
    }
}
