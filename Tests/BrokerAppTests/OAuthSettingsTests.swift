import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Per-account settings on OAuth sign-ins: an OAuth 2.0 provider whose endpoints sit at each account's subdomain
/// (`http://{subdomain}.localhost:PORT/…`; every name under `localhost` is the loopback address, RFC 6761 §6.3, so
/// the fake sees the host in `Host`). `GET /authorize?settings.subdomain=acme`, `POST /authorize` and
/// `POST /device/authorize` fill the authorize, token, user and device URLs; the flow carries the settings to the
/// callback; the account keeps them for its refreshes and revocation; an unfit value opens no connection.
@Suite(.scoped) struct OAuthSettingsTests {
    static let clientSecret = "ACME-CLIENT-SECRET-settings-0123456789"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
    static let json = [("Content-Type", "application/json")]
    static let declared = #""settings": [{"name": "subdomain", "description": "Your team's subdomain"}]"#
    static let origin = "https://app.example"

    struct Setup {
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness
        let clock: TestClock
        var browser: Browser { Browser(brokerPort: broker.port, providerPort: provider.port) }

        func send(_ method: String, _ target: String, _ body: String = "", headers: [(String, String)] = OAuthSettingsTests.api)
            async throws -> TestHTTP.Reply
        {
            let type = body.isEmpty ? [] : OAuthSettingsTests.json
            return try #require(await TestHTTP.send(port: broker.port, method: method, target: target, headers: headers + type, body: body))
        }
    }

    /// The fake's device-enabled entry with every URL at `http://{subdomain}.localhost:PORT` (or at `base`).
    static func setUp(base: String? = nil) throws -> Setup {
        // One clock for the broker and the fake, so a device poll is due for both (RFC 8628 §3.5).
        let clock = TestClock(Date())
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: clientSecret)
        configuration.now = clock.function
        let provider = try FakeOAuth2Provider.scoped(configuration)
        let entry = provider.deviceProviderEntry(extra: declared).replacingOccurrences(
            of: provider.baseURL, with: base ?? "http://{subdomain}.localhost:\(provider.port)")
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(entry)}}",
            environment: [
                "FAKE_ACME_SECRET": clientSecret, "BROKER_REFRESH_INTERVAL": "0", "BROKER_DEVICE_POLL_TICK": "0",
                "BROKER_CORS_ORIGINS": origin,
            ], now: clock.function)
        return Setup(provider: provider, broker: broker, clock: clock)
    }

    static func object(_ body: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }

    @Test func aSignInWithASubdomainExchangesRefreshesAndRevokesAtThatHost() async throws {
        let s = try Self.setUp()
        let host = "acme.localhost:\(s.provider.port)"
        s.provider.set { $0.users = .fixed("8101") }
        let callback = await s.browser.connect(provider: "acme", extra: "&settings.subdomain=acme")
        #expect(callback?.status == 200, "\(callback?.body ?? "no reply")")
        let account = Self.object(try await s.send("GET", "/account?id=acme:8101").body)
        #expect(account["settings"] as? [String: String] == ["subdomain": "acme"], "\(account)")
        // The browser's authorize request, then the broker's token exchange and user call: all at acme's host.
        let signIn = s.provider.ledger.hostCalls
        #expect(signIn.count == 3 && signIn.allSatisfy { $0.hasPrefix(host + " ") }, "\(signIn)")
        // Past the 10 s in which a forced refresh reuses the last one's token.
        s.clock.advance(11)
        let refreshed = try await s.send("POST", "/account/refresh?id=acme:8101")
        #expect(refreshed.status == 200, "\(refreshed.body)")
        #expect(s.provider.refreshCalls == 1)
        let deleted = try await s.send("DELETE", "/account?id=acme:8101")
        #expect(deleted.status == 204, "\(deleted.body)")
        #expect(s.provider.revokeCalls == 1)
        let all = s.provider.ledger.hostCalls
        #expect(all.count == 5 && all.allSatisfy { $0.hasPrefix(host + " ") }, "\(all)")
    }

    @Test func postAuthorizeTakesASettingsObjectAndTheBackEndsFlowCompletesAtThatHost() async throws {
        let s = try Self.setUp()
        s.provider.set { $0.users = .fixed("8102") }
        let started = try await s.send(
            "POST", "/authorize", #"{"provider":"acme","end_user_id":"u-1","settings":{"subdomain":"globex"}}"#)
        #expect(started.status == 200, "\(started.body)")
        let url = try #require(Self.object(started.body)["authorize_url"] as? String)
        #expect(url.hasPrefix("http://globex.localhost:\(s.provider.port)/"), "\(url)")
        let callback = try #require(await s.browser.visitProvider(url))
        #expect(await s.browser.get(callback)?.status == 200)
        let account = Self.object(try await s.send("GET", "/account?id=acme:8102").body)
        #expect(account["settings"] as? [String: String] == ["subdomain": "globex"] && account["end_user_id"] as? String == "u-1")
        // A form body gives them as settings.NAME fields.
        let form = try await s.send(
            "POST", "/authorize", "provider=acme&settings.subdomain=initech",
            headers: Self.api + [("Content-Type", "application/x-www-form-urlencoded")])
        #expect(form.status == 200 && form.body.contains("initech.localhost"), "\(form.body)")
        #expect(s.provider.ledger.hostCalls.allSatisfy { $0.hasPrefix("globex.localhost:") }, "\(s.provider.ledger.hostCalls)")
    }

    @Test func aDeviceSignInWithASubdomainAsksAndPollsThatHost() async throws {
        let s = try Self.setUp()
        let host = "acme.localhost:\(s.provider.port)"
        s.provider.set {
            $0.users = .fixed("8103")
            $0.devicePending = 0
        }
        let started = try await s.send("POST", "/device/authorize", #"{"provider":"acme","settings":{"subdomain":"acme"}}"#)
        #expect(started.status == 200, "\(started.body)")
        let state = try #require(Self.object(started.body)["state"] as? String)
        s.clock.advance(5)
        #expect(await s.broker.broker.devicePoller.runOnce() == 1)
        let outcome = Self.object(try await s.send("GET", "/flows/" + state).body)
        #expect(outcome["status"] as? String == "completed", "\(outcome)")
        let account = Self.object(try await s.send("GET", "/account?id=acme:8103").body)
        #expect(account["settings"] as? [String: String] == ["subdomain": "acme"], "\(account)")
        let calls = s.provider.ledger.hostCalls
        #expect(calls.count == 3 && calls.allSatisfy { $0.hasPrefix(host + " ") }, "\(calls)")
    }

    static let html = [("Accept", "text/html,application/xhtml+xml")]

    /// The value of the page's hidden input `name`.
    static func hidden(_ name: String, in page: String) -> String? {
        guard let range = page.range(of: "name=\"\(name)\" value=\"") else { return nil }
        return String(page[range.upperBound...].prefix { $0 != "\"" })
    }

    /// `POST /connect/settings` with the browser's cookies.
    static func postSettings(_ browser: Browser, _ body: String) async throws -> TestHTTP.Reply {
        let reply = try #require(
            await TestHTTP.send(
                port: browser.brokerPort, method: "POST", target: "/connect/settings",
                headers: browser.jar.header + html + [("Content-Type", "application/x-www-form-urlencoded")], body: body))
        browser.jar.absorb(reply)
        return reply
    }

    @Test func aConnectSessionThatFixesTheSettingSignsInAtItsHost() async throws {
        let s = try Self.setUp()
        s.provider.set { $0.users = .fixed("8104") }
        // Settings fix one provider's URLs: a session offering every provider cannot carry them.
        let loose = try await s.send(
            "POST", "/connect/sessions", #"{"end_user_id":"u-1","origin":"\#(Self.origin)","settings":{"subdomain":"acme"}}"#)
        #expect(loose.status == 400 && loose.body.contains("allowed_providers"), "\(loose.body)")
        let made = try await s.send(
            "POST", "/connect/sessions",
            #"{"end_user_id":"u-1","origin":"\#(Self.origin)","allowed_providers":["acme"],"settings":{"subdomain":"acme"}}"#)
        #expect(made.status == 201, "\(made.body)")
        let token = try #require(Self.object(made.body)["token"] as? String)
        let browser = s.browser
        #expect(await browser.get("/connect?session=" + token, headers: Self.html)?.status == 200)
        let start = try #require(await browser.get("/connect/start?provider=acme", headers: Self.html))
        let location = try #require(start.header("Location"), "\(start.status) \(start.body)")
        #expect(location.hasPrefix("http://acme.localhost:\(s.provider.port)/"), "\(location)")
        let callback = try #require(await browser.visitProvider(location))
        #expect(await browser.get(callback, headers: Self.html)?.status == 200)
        let account = Self.object(try await s.send("GET", "/account?id=acme:8104").body)
        #expect(account["settings"] as? [String: String] == ["subdomain": "acme"] && account["end_user_id"] as? String == "u-1")
        #expect(s.provider.ledger.hostCalls.allSatisfy { $0.hasPrefix("acme.localhost:") }, "\(s.provider.ledger.hostCalls)")
    }

    @Test func aConnectSessionAsksForTheSettingOnItsHostedPage() async throws {
        let s = try Self.setUp()
        s.provider.set { $0.users = .fixed("8105") }
        let made = try await s.send(
            "POST", "/connect/sessions", #"{"end_user_id":"u-2","origin":"\#(Self.origin)","allowed_providers":["acme"]}"#)
        let token = try #require(Self.object(made.body)["token"] as? String, "\(made.body)")
        let browser = s.browser
        let picker = try #require(await browser.get("/connect?session=" + token, headers: Self.html))
        let form = try #require(await browser.get("/connect/start?provider=acme", headers: Self.html))
        #expect(form.status == 200, "\(form.body)")
        #expect(form.body.contains(#"action="/connect/settings""#) && form.body.contains(#"name="settings.subdomain""#))
        #expect(form.body.contains("Your team&#39;s subdomain") || form.body.contains("Your team's subdomain"), "\(form.body)")
        // The page's policy is every page's: no script of its own, the same Content-Security-Policy.
        #expect(!form.body.contains("<script") && form.header("Content-Security-Policy") == picker.header("Content-Security-Policy"))
        let csrf = try #require(Self.hidden("csrf", in: form.body))
        // A post without the page's token is refused and starts nothing.
        let forged = try await Self.postSettings(browser, "provider=acme&csrf=x&settings.subdomain=globex")
        #expect(forged.status == 403)
        // An unfit value shows the form again naming the setting, never the value, and calls nobody.
        let unfit = try await Self.postSettings(browser, "provider=acme&csrf=\(csrf)&settings.subdomain=acme.evil.com")
        #expect(unfit.status == 400 && unfit.body.contains("subdomain") && !unfit.body.contains("evil.com"), "\(unfit.body)")
        #expect(s.provider.ledger.hostCalls.isEmpty)
        let again = try #require(Self.hidden("csrf", in: unfit.body))
        // A page that goes on by `Refresh` (a redirect of the form post would break `form-action 'self'`), with a link.
        let started = try await Self.postSettings(browser, "provider=acme&csrf=\(again)&settings.subdomain=globex")
        #expect(started.status == 200 && started.header("Location") == nil, "\(started.status) \(started.body)")
        let refresh = try #require(started.header("Refresh"), "\(started.body)")
        #expect(refresh.hasPrefix("0; url="))
        let location = String(refresh.dropFirst("0; url=".count))
        #expect(started.body.contains("id=\"tb-continue\""))
        #expect(location.hasPrefix("http://globex.localhost:\(s.provider.port)/"), "\(location)")
        // The choice is single use and its cookie is cleared: the same post again starts nothing.
        #expect(try await Self.postSettings(browser, "provider=acme&csrf=\(again)&settings.subdomain=globex").status == 403)
        let callback = try #require(await browser.visitProvider(location))
        #expect(await browser.get(callback, headers: Self.html)?.status == 200)
        let account = Self.object(try await s.send("GET", "/account?id=acme:8105").body)
        #expect(account["settings"] as? [String: String] == ["subdomain": "globex"], "\(account)")
    }

    /// OAuth 1.0a asks for a request token before the browser leaves: an unfit setting is refused before that call, and
    /// a fit one sends it to the account's host.
    @Test func anOAuth1RequestTokenIsAskedOnlyWithAFitSettingAndAtItsHost() async throws {
        let twitter = try FakeTwitterProvider.scoped(consumerSecret: TwitterEndToEndTests.consumerSecret)
        let listener = try LoopbackListener()
        func broker(port: Int) throws -> BrokerHarness {
            var entry = twitter.providerEntry().replacingOccurrences(
                of: twitter.baseURL, with: "http://{subdomain}.localhost:\(port)")
            entry.removeLast()
            entry += ", " + Self.declared + "}"
            return try BrokerHarness(
                providersJSON: "{\"providers\": {\(entry)}}",
                environment: [
                    "TWITTER_CONSUMER_KEY": FakeTwitterProvider.consumerKey,
                    "TWITTER_CONSUMER_SECRET": TwitterEndToEndTests.consumerSecret,
                ])
        }
        let refusing = try broker(port: listener.port)
        for query in ["settings.subdomain=acme.evil.com", "settings.subdomain=a%40b", ""] {
            let reply = try #require(await TestHTTP.send(port: refusing.port, target: "/authorize?provider=twitter&" + query))
            #expect(reply.status == 400 && reply.body.contains("invalid_setting"), "\(query): \(reply.body)")
        }
        #expect(listener.acceptedCount() == 0)
        let serving = try broker(port: twitter.port)
        let reply = try #require(await TestHTTP.send(port: serving.port, target: "/authorize?provider=twitter&settings.subdomain=acme"))
        #expect(reply.status == 302, "\(reply.body)")
        #expect(reply.header("Location")?.hasPrefix("http://acme.localhost:\(twitter.port)/oauth/authorize?") == true)
        #expect(twitter.state.requestTokenCalls == 1)
    }

    /// An unfit setting, as `GET /authorize` (query), `POST /authorize` and `POST /device/authorize` (JSON) and a
    /// connect session (JSON) give it: each is `400 invalid_setting` naming the setting, never echoing the value,
    /// and the provider's host, a listener nobody serves, sees no connection.
    @Test(arguments: [
        ("settings.subdomain=acme.evil.com", #"{"subdomain":"acme.evil.com"}"#, "subdomain"),
        ("settings.subdomain=%252e", #"{"subdomain":"%2e"}"#, "subdomain"),
        ("settings.subdomain=a%40b", #"{"subdomain":"a@b"}"#, "subdomain"),
        ("settings.subdomain=..", #"{"subdomain":".."}"#, "subdomain"),
        ("settings.subdomain=", #"{"subdomain":""}"#, "subdomain"),
        ("settings.subdomain=a%2Fb", #"{"subdomain":"a/b"}"#, "subdomain"),
        ("settings.subdomains=acme", #"{"subdomains":"acme"}"#, "subdomains"),
        ("", "{}", "subdomain"),
    ])
    func anUnfitSettingIsRefusedOnEveryStartBeforeAnyConnection(query: String, object: String, named: String) async throws {
        let listener = try LoopbackListener()
        let s = try Self.setUp(base: "http://{subdomain}.localhost:\(listener.port)")
        var replies = [
            try await s.send("GET", "/authorize?provider=acme&" + query, headers: []),
            try await s.send("POST", "/authorize", #"{"provider":"acme","settings":\#(object)}"#),
            try await s.send("POST", "/device/authorize", #"{"provider":"acme","settings":\#(object)}"#),
        ]
        // A session without settings is not refused: its hosted page asks for them (`aConnectSessionAsksForTheSetting…`).
        if object != "{}" {
            replies.append(
                try await s.send(
                    "POST", "/connect/sessions",
                    #"{"end_user_id":"u-1","origin":"\#(Self.origin)","allowed_providers":["acme"],"settings":\#(object)}"#))
        }
        for reply in replies {
            #expect(reply.status == 400, "\(reply.body)")
            let body = Self.object(reply.body)
            #expect(body["error"] as? String == "invalid_setting", "\(reply.body)")
            #expect((body["message"] as? String)?.contains("\"\(named)\"") == true, "\(reply.body)")
            #expect(!reply.body.contains("evil.com") && !reply.body.contains("%2e") && !reply.body.contains("a@b"), "\(reply.body)")
        }
        #expect(listener.acceptedCount() == 0)
    }
}
