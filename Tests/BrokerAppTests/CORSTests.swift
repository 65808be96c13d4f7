import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// CORS on the browser-session routes: listed origins may call them with the browser's cookies, others get no CORS field.
@Suite(.scoped) struct CORSTests {
    static let listed = "http://localhost:3000"
    static let unlisted = "http://localhost:4000"
    static let api = WeiboFlowTests.api

    /// A broker allowing `listed`, and a browser that connected Weibo account `uid`.
    static func withBroker(_ body: (WeiboFlowTests.Setup, Browser) async throws -> Void) async throws {
        let s = try WeiboFlowTests.setUp(environment: ["BROKER_CORS_ORIGINS": "https://app.example.com, \(listed)"])
        do {
            let browser = s.browser
            #expect(await browser.connect(provider: "weibo")?.status == 200)
            try await body(s, browser)
        } catch {
            await s.broker.stop()
            throw error
        }
        await s.broker.stop()
    }

    static func corsFields(_ reply: TestHTTP.Reply) -> [String] {
        reply.headers.map(\.0).filter { $0.lowercased().hasPrefix("access-control-") }
    }

    @Test(arguments: [
        ("https://app.example.com", "https://app.example.com"), ("HTTPS://App.Example.COM", "https://app.example.com"),
        ("https://app.example.com:443", "https://app.example.com"), ("http://localhost:80", "http://localhost"),
        ("http://127.0.0.1:3000", "http://127.0.0.1:3000"), ("https://[::1]:8443", "https://[::1]:8443"),
        ("http://xn--bcher-kva.example", "http://xn--bcher-kva.example"),
    ])
    func originsAreSerializedAsBrowsersSendThem(text: String, origin: String) {
        #expect(CORSPolicy.serialize(text) == origin)
    }

    @Test(arguments: [
        "https://app.example.com/", "https://app.example.com/path", "app.example.com", "ftp://app.example.com",
        "https://", "https://user@app.example.com", "https://app.example.com:0", "https://app.example.com:65536",
        "https://app.example.com:", "https://app..example.com", "https://bücher.example", "https://app.example.com?x",
        "https://app.example.com#x", "https://[::1", "https://[not-ip]", "http://a b",
    ])
    func anythingButAnOriginIsRefused(text: String) {
        #expect(CORSPolicy.serialize(text) == nil)
    }

    @Test func theVariableIsValidatedAtStartAndABadValueNamesIt() async throws {
        let c = try BrokerConfiguration.from(environment: [
            "BROKER_CORS_ORIGINS": " https://A.example:443 ,http://127.0.0.1:3000,, https://a.example"
        ])
        #expect(c.corsOrigins == ["https://a.example", "http://127.0.0.1:3000"])
        #expect(try BrokerConfiguration.from(environment: [:]).corsOrigins == [])
        for bad in ["*", "null", "https://app.example.com/", "app.example.com"] {
            #expect(throws: ConfigurationError.self) { try BrokerConfiguration.from(environment: ["BROKER_CORS_ORIGINS": bad]) }
        }
        let (status, stderr) = try await runBroker(
            [], environment: ["BROKER_CORS_ORIGINS": "https://app.example.com/path", "BROKER_PORT": "0"])
        #expect(status == 2)
        #expect(stderr.contains("BROKER_CORS_ORIGINS") && stderr.contains("https://app.example.com/path"))
    }

    @Test func aListedOriginReadsTheAccountWithTheBrowsersCookies() async throws {
        try await Self.withBroker { _, browser in
            // Twice: the first read may take the asynchronous path, the second is served from memory inline.
            for _ in 0..<2 {
                let reply = try #require(await browser.get("/account?id=weibo:3733034601", headers: [("Origin", Self.listed)]))
                #expect(reply.status == 200)
                #expect(reply.header("Access-Control-Allow-Origin") == Self.listed)
                #expect(reply.header("Access-Control-Allow-Credentials") == "true")
                #expect(reply.header("Access-Control-Expose-Headers") == "Retry-After, WWW-Authenticate")
                #expect(reply.headers("Vary") == ["Origin"])
            }
            // Its page can read a refusal too.
            let refused = try #require(await browser.get("/account?id=weibo:1", headers: [("Origin", Self.listed)]))
            #expect(refused.status == 401 && refused.header("Access-Control-Allow-Origin") == Self.listed)
        }
    }

    @Test func anotherOriginOrNoneGetsNoCORSFieldButVaryAlways() async throws {
        try await Self.withBroker { _, browser in
            for origin in [Self.unlisted, "http://localhost:3000.evil.example", "null", "http://LOCALHOST:3000", ""] {
                let headers = origin.isEmpty ? [] : [("Origin", origin)]
                let reply = try #require(await browser.get("/account?id=weibo:3733034601", headers: headers))
                #expect(reply.status == 200)
                #expect(Self.corsFields(reply) == [], "\(origin)")
                #expect(reply.headers("Vary") == ["Origin"])
            }
            let list = try #require(await browser.get("/accounts", headers: [("Origin", Self.unlisted)]))
            #expect(list.status == 200 && Self.corsFields(list) == [] && list.headers("Vary") == ["Origin"])
        }
    }

    @Test func aTokenAnswerCarriesVaryOnceAfterItsOwnFieldsAndBeforeTheCORSFields() async throws {
        try await Self.withBroker { s, _ in
            let own = ["Cache-Control", "Pragma", "Referrer-Policy", "Content-Type", "Vary"]
            let cors = ["Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Expose-Headers"]
            // Each twice (the second read is served inline from memory), alternating so a listed origin's fields
            // never stay on the shared list the next answer starts from.
            for origin in [Self.listed, Self.unlisted, Self.listed, ""] {
                let headers = Self.api + (origin.isEmpty ? [] : [("Origin", origin)])
                let reply = try #require(
                    await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:3733034601", headers: headers))
                #expect(reply.status == 200)
                let names = reply.headers.map(\.0).filter { (own + cors).contains($0) }
                #expect(names == own + (origin == Self.listed ? cors : []), "\(origin)")
                #expect(reply.header("Vary") == "Origin" && reply.header("Cache-Control") == "no-store")
            }
        }
    }

    @Test func aPreflightOfAListedOriginIsAnsweredAndOthersAreNot() async throws {
        try await Self.withBroker { s, _ in
            let preflight = [
                ("Origin", Self.listed), ("Access-Control-Request-Method", "DELETE"),
                ("Access-Control-Request-Headers", "content-type"),
            ]
            let ok = try #require(
                await TestHTTP.send(
                    port: s.broker.port, method: "OPTIONS", target: "/account?id=weibo:3733034601",
                    headers: preflight))
            #expect(ok.status == 204)
            #expect(ok.header("Access-Control-Allow-Origin") == Self.listed)
            #expect(ok.header("Access-Control-Allow-Credentials") == "true")
            #expect(ok.header("Access-Control-Allow-Methods") == "GET, HEAD, DELETE")
            #expect(ok.header("Access-Control-Allow-Headers") == "Accept, Content-Type")
            #expect(ok.header("Access-Control-Max-Age") == "600")
            #expect(ok.header("Allow") == "GET, HEAD, DELETE, OPTIONS")
            #expect(ok.headers("Vary") == ["Origin"])
            let list = try #require(await TestHTTP.send(port: s.broker.port, method: "OPTIONS", target: "/accounts", headers: preflight))
            #expect(list.status == 204 && list.header("Access-Control-Allow-Methods") == "GET, HEAD")

            for headers in [[("Origin", Self.unlisted), ("Access-Control-Request-Method", "DELETE")], [("Origin", Self.listed)], []] {
                let reply = try #require(await TestHTTP.send(port: s.broker.port, method: "OPTIONS", target: "/account", headers: headers))
                #expect(reply.status == 204)
                #expect(Self.corsFields(reply) == [])
                #expect(reply.header("Allow") == "GET, HEAD, DELETE, OPTIONS" && reply.headers("Vary") == ["Origin"])
            }
        }
    }

    @Test func aListedOriginDeletesTheAccountItsBrowserConnected() async throws {
        try await Self.withBroker { s, browser in
            let other = try #require(
                await TestHTTP.send(
                    port: s.broker.port, method: "DELETE", target: "/account?id=weibo:3733034601",
                    headers: [("Origin", Self.listed)]))
            #expect(other.status == 401 && other.header("Access-Control-Allow-Origin") == Self.listed)
            let reply = try #require(
                await TestHTTP.send(
                    port: s.broker.port, method: "DELETE", target: "/account?id=weibo:3733034601",
                    headers: browser.jar.header + [("Origin", Self.listed)]))
            #expect(reply.status == 204)
            #expect(reply.header("Access-Control-Allow-Origin") == Self.listed && reply.headers("Vary") == ["Origin"])
            #expect(s.weibo.revokeCalls == 1)
        }
    }

    @Test func otherRoutesNeverCarryCORSFields() async throws {
        try await Self.withBroker { s, browser in
            // `/providers` answers listed origins since connect sessions (ConnectSessionTests); these never do.
            for target in ["/healthz", "/openapi.json", "/", "/authorize?provider=weibo", "/connect.js"] {
                let reply = try #require(await browser.get(target, headers: [("Origin", Self.listed)]))
                #expect(Self.corsFields(reply) == [], "\(target)")
            }
            // A route for back ends only: no preflight, so a page cannot even ask.
            let replay = try #require(
                await TestHTTP.send(
                    port: s.broker.port, method: "OPTIONS", target: "/webhooks/replay",
                    headers: [("Origin", Self.listed), ("Access-Control-Request-Method", "POST")]))
            #expect(replay.status == 405 && Self.corsFields(replay) == [])
        }
    }

    @Test func theSessionListsOnlyThisBrowsersAccounts() async throws {
        try await Self.withBroker { s, browser in
            s.weibo.set { $0.users = .fixed("5000000002") }
            let second = s.browser
            #expect(await second.connect(provider: "weibo")?.status == 200)
            let mine = try #require(await browser.get("/accounts", headers: [("Origin", Self.listed)]))
            #expect(mine.status == 200 && mine.header("Access-Control-Allow-Origin") == Self.listed)
            #expect(mine.body.contains("\"id\":\"weibo:3733034601\"") && !mine.body.contains("5000000002"))
            #expect(!mine.body.contains("SENTINEL"))
            let theirs = try #require(await second.get("/accounts?provider=weibo"))
            #expect(theirs.body.contains("\"id\":\"weibo:5000000002\"") && !theirs.body.contains("3733034601"))
            #expect(try #require(await second.get("/accounts?provider=github")).body == "{\"accounts\":[],\"next_cursor\":null}")
            let all = try #require(await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: Self.api))
            #expect(all.body.contains("3733034601") && all.body.contains("5000000002"))
            // No session, a tampered one, or a wrong key beside a good session: 401.
            #expect(try #require(await TestHTTP.send(port: s.broker.port, target: "/accounts")).status == 401)
            let cookie = try #require(browser.jar.cookies["tb_session"])
            let tampered = String(cookie.dropLast()) + (cookie.hasSuffix("A") ? "B" : "A")
            #expect(
                try #require(
                    await TestHTTP.send(
                        port: s.broker.port, target: "/accounts",
                        headers: [("Cookie", "tb_session=" + tampered)])
                ).status == 401)
            let wrongKey = browser.jar.header + [("Authorization", "Bearer wrong-key-0123456789abcdef")]
            #expect(try #require(await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: wrongKey)).status == 401)
            // A deleted account drops out of the session's list.
            #expect(
                try #require(
                    await TestHTTP.send(
                        port: s.broker.port, method: "DELETE", target: "/account?id=weibo:3733034601",
                        headers: Self.api)
                ).status == 204)
            #expect(try #require(await browser.get("/accounts")).body == "{\"accounts\":[],\"next_cursor\":null}")
        }
    }
}
