import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

#if canImport(Glibc)
import Glibc
#endif

/// `token-broker demo` as a newcomer meets it: the real process, a browser's steps over HTTP (redirects followed
/// by hand, cookies kept), the consent page of the demo provider, the token read with the printed curl line,
/// and the same read after the token's lifetime returning a refreshed token.
@Suite(.scoped) struct DemoCommandTests {
    static let lifetime = 3
    static let html = [("Accept", "text/html,application/xhtml+xml")]

    /// The value of the JSON string field `name` in `body`.
    static func field(_ body: String, _ name: String) -> String? {
        guard let range = body.range(of: "\"\(name)\":\"") else { return nil }
        return String(body[range.upperBound...].prefix { $0 != "\"" })
    }

    /// The text of `html` between `before` and the next `end`.
    static func between(_ html: String, _ before: String, _ end: Character = "\"") -> String? {
        html.range(of: before).map { String(html[$0.upperBound...].prefix { $0 != end }) }
    }

    /// `http://127.0.0.1:PORT/path?query` as (port, target).
    static func split(_ url: String) -> (port: Int, target: String)? {
        guard let components = URLComponents(string: url), let port = components.port else { return nil }
        return (port, components.percentEncodedPath + (components.percentEncodedQuery.map { "?" + $0 } ?? ""))
    }

    @Test func aNewcomerConnectsTheDemoAccountReadsTheTokenAndLaterReadsARefreshedOne() async throws {
        let port = try Loopback.freePort()
        let demo = try await BrokerProcess.start(
            environment: [
                "BROKER_PORT": String(port), "BROKER_DEMO_TOKEN_LIFETIME": String(Self.lifetime),
                "BROKER_DATA_DIR": "/nonexistent/never-used", "BROKER_API_KEY": "ignored-by-the-demo-0123456789",
            ],
            arguments: ["demo"], ready: { $0.contains("API key") ? port : nil })

        // The banner: where to go, the key, how to read the token.
        let banner = demo.stdout
        let base = "http://127.0.0.1:\(port)"
        #expect(banner.contains("Open \(base)/"))
        let apiKey = try #require(
            banner.split(separator: "\n").first { $0.hasPrefix("  API key ") }?.split(separator: " ").last.map(String.init))
        #expect(apiKey.count >= 16 && apiKey != "ignored-by-the-demo-0123456789")
        let curl = "curl -s -H 'Authorization: Bearer \(apiKey)' '\(base)/account?provider=demo&uid=demo-user'"
        #expect(banner.contains(curl))
        let directory = try #require(Self.between(banner, "data           ", " "))
        #expect(FileManager.default.fileExists(atPath: directory + "/data"))

        // The connect page lists Demo; Connect goes to the demo provider's consent page.
        let jar = CookieJar()
        func get(_ target: String) async throws -> TestHTTP.Reply {
            let reply = try #require(await TestHTTP.send(port: port, target: target, headers: Self.html + jar.header))
            jar.absorb(reply)
            return reply
        }
        let page = try await get("/")
        #expect(page.status == 200)
        let connect = try #require(Self.between(page.body, "<a class=\"button\" href=\""))
        #expect(connect == "/authorize?provider=demo" && page.body.contains(">Connect Demo</a>"))
        let start = try await get(connect)
        #expect(start.status == 302)
        let provider = try #require(start.header("Location").flatMap(Self.split))
        #expect(provider.target.contains("code_challenge_method=S256"))
        let consent = try #require(await TestHTTP.send(port: provider.port, target: provider.target))
        #expect(consent.status == 200)
        #expect(consent.body.contains("Demo provider — not a real account"))
        #expect(!consent.body.lowercased().contains("<script"))
        // No form-action: Chromium would apply it to the callback's redirect on to another origin too.
        #expect(consent.header("Content-Security-Policy")?.contains("form-action") == false)
        let action = try #require(Self.between(consent.body, "<form method=\"post\" action=\""))
        let request = try #require(Self.between(consent.body, "name=\"request\" value=\""))

        // Approve: the provider sends the browser back to the broker, which lands it on the page with the account.
        let approved = try #require(
            await TestHTTP.send(
                port: provider.port, method: "POST", target: action,
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: "request=\(request)&decision=approve"))
        #expect(approved.status == 303)
        let callback = try #require(approved.header("Location").flatMap(Self.split))
        #expect(callback.port == port && callback.target.hasPrefix("/callback?code=demo-code-"))
        let finished = try await get(callback.target)
        #expect(finished.status == 303)
        let listed = try await get(finished.header("Location") ?? "/")
        #expect(listed.body.contains("data-account=\"demo:demo-user\" data-status=\"active\""))
        #expect(listed.body.contains("Connected Demo account"))

        // The token, as the printed curl line reads it.
        let api = [("Authorization", "Bearer " + apiKey)]
        let first = try #require(await TestHTTP.send(port: port, target: "/account?provider=demo&uid=demo-user", headers: api))
        #expect(first.status == 200)
        let token = try #require(Self.field(first.body, "access_token"))
        #expect(token.hasPrefix("demo-access-"))
        let expiry = try #require(Self.field(first.body, "expires_at").flatMap(RFC3339Date.parse))

        // After the token's lifetime the same read gets a refreshed one. Waiting here is the point of the test:
        // the token's life is wall-clock time in another process.
        let wait = expiry.timeIntervalSinceNow + 0.5
        if wait > 0 { try await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
        let later = try #require(await TestHTTP.send(port: port, target: "/account?provider=demo&uid=demo-user", headers: api))
        #expect(later.status == 200)
        let refreshed = try #require(Self.field(later.body, "access_token"))
        #expect(refreshed != token && refreshed.hasPrefix("demo-access-"))
        #expect(Self.field(later.body, "refreshed_at") != nil)
        // Later than the first token's: compared with the clock instead, a machine slower than the 3 s lifetime
        // between the refresh and this line failed it.
        #expect(try #require(Self.field(later.body, "expires_at").flatMap(RFC3339Date.parse)) > expiry)
        #expect(Self.field(later.body, "status") == "active")

        // Ctrl-C: a clean stop that takes the throwaway data with it; no token was logged.
        demo.signal(SIGINT)
        #expect(await demo.waitForExit(timeout: 60) == 0)
        #expect(!FileManager.default.fileExists(atPath: directory))
        #expect(!demo.log.contains(token) && !demo.log.contains(refreshed) && !demo.log.contains(apiKey))
    }

    @Test func theDemoSettingsNameTheirVariableWhenWrong() throws {
        #expect(try Demo.Settings.from(environment: [:]) == Demo.Settings(providerPort: nil, tokenLifetime: 120))
        #expect(
            try Demo.Settings.from(environment: ["BROKER_DEMO_PORT": "9000", "BROKER_DEMO_TOKEN_LIFETIME": "30"])
                == Demo.Settings(providerPort: 9000, tokenLifetime: 30))
        for (variable, bad) in [
            ("BROKER_DEMO_PORT", "0"), ("BROKER_DEMO_PORT", "http"), ("BROKER_DEMO_TOKEN_LIFETIME", "1"),
            ("BROKER_DEMO_TOKEN_LIFETIME", "-5"),
        ] {
            #expect { try Demo.Settings.from(environment: [variable: bad]) } throws: { ($0 as? ConfigurationError)?.variable == variable }
        }
        #expect { try Demo.prepare(environment: ["BROKER_PORT": "0"]) } throws: { ($0 as? ConfigurationError)?.variable == "BROKER_PORT" }
    }

    @Test func onlyTheDemoCommandHasTheDemoProvider() async throws {
        #expect(BrokerCommand.parse(["demo"]) == .success(.demo))
        #expect(BrokerCommand.usage.contains("demo "))
        let serve = try BrokerHarness(providersJSON: "{\"providers\": {}}")
        let providers = try #require(await TestHTTP.send(port: serve.port, target: "/providers"))
        #expect(providers.status == 200 && !providers.body.contains("\"demo\""))
    }
}
