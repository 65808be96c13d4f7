import BrokerCore
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Connect sessions over real sockets: a back end makes one with the API key, a browser (a cookie jar) opens its
/// page, chooses a provider, signs in at the fake provider and lands on the end page that posts to the front end.
@Suite(.scoped) struct ConnectSessionTests {
    static let clientSecret = "ACME-CLIENT-SECRET-connect-sessions"
    static let frontEnd = "https://app.example.com"
    /// What a browser's navigation asks for.
    static let html = [("Accept", "text/html,application/xhtml+xml")]
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Content-Type", "application/json")]

    struct Setup {
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness
        let clock: TestClock

        /// `POST /connect/sessions` with `body`; the status and the answer's members.
        func create(_ body: String, headers: [(String, String)] = ConnectSessionTests.api) async -> (status: Int, json: [String: Any]) {
            let reply = await TestHTTP.send(port: broker.port, method: "POST", target: "/connect/sessions", headers: headers, body: body)
            return (reply?.status ?? 0, ConnectSessionTests.json(reply?.body ?? ""))
        }

        /// A session for end user `user-7` from the front end; its token.
        func session(_ extra: String = "") async throws -> String {
            let made = await create("{\"end_user_id\":\"user-7\",\"origin\":\"\(ConnectSessionTests.frontEnd)\"\(extra)}")
            #expect(made.status == 201)
            return try #require(made.json["token"] as? String)
        }

        func browser() -> Browser { Browser(brokerPort: broker.port, providerPort: provider.port) }

        /// The popup's whole run with `browser`: the session's page, the provider's (from `choose` on the page), the
        /// callback; returns the end page.
        func run(_ token: String, in browser: Browser, choose provider: String? = "acme") async throws -> TestHTTP.Reply {
            var reply = try #require(await browser.get("/connect?session=" + token, headers: ConnectSessionTests.html))
            if let provider {
                #expect(reply.status == 200)
                reply = try #require(await browser.get("/connect/start?provider=" + provider, headers: ConnectSessionTests.html))
            }
            #expect(reply.status == 302)
            let location = try #require(reply.header("Location"))
            let callback = try #require(await browser.visitProvider(location))
            return try #require(await browser.get(callback, headers: [("Accept", "text/html")]))
        }
    }

    static func setUp(environment: [String: String] = [:], clock: TestClock = TestClock(Date())) throws -> Setup {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: clientSecret))
        let providers = "{\"providers\": {\(provider.providerEntry()), \(provider.providerEntry(name: "other"))}}"
        var env = [
            "FAKE_ACME_SECRET": clientSecret, "BROKER_REFRESH_INTERVAL": "0", "BROKER_CORS_ORIGINS": frontEnd + ",https://other.example",
        ]
        env.merge(environment) { $1 }
        let broker = try BrokerHarness(providersJSON: providers, environment: env, now: clock.function)
        return Setup(provider: provider, broker: broker, clock: clock)
    }

    static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// The end page's outcome: the `data-*` attributes of `#tb-result`.
    static func outcome(_ page: String) -> [String: String] {
        guard let start = page.range(of: "<div id=\"tb-result\""), let end = page[start.upperBound...].range(of: ">") else { return [:] }
        var result: [String: String] = [:]
        let attributes = page[start.upperBound..<end.lowerBound]
        let pattern = try! NSRegularExpression(pattern: "data-([a-z]+)=\"([^\"]*)\"")
        let text = String(attributes)
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let name = String(text[Range(match.range(at: 1), in: text)!])
            let value = String(text[Range(match.range(at: 2), in: text)!]).replacingOccurrences(of: "&amp;", with: "&")
            result[name] = value
        }
        return result
    }

    @Test func creatingASessionNeedsTheAPIKeyAListedOriginAndAnEndUser() async throws {
        let s = try Self.setUp()
        let ok = "{\"end_user_id\":\"u\",\"origin\":\"\(Self.frontEnd)\"}"
        #expect(await s.create(ok, headers: [("Content-Type", "application/json")]).status == 401)
        let cases: [(String, Int, String)] = [
            ("{\"origin\":\"\(Self.frontEnd)\"}", 400, "end_user_id"),
            ("{\"end_user_id\":\"u\"}", 400, "origin"),
            ("{\"end_user_id\":\"u\",\"origin\":\"https://evil.example\"}", 400, "BROKER_CORS_ORIGINS"),
            ("{\"end_user_id\":\"u\",\"origin\":\"\(Self.frontEnd)\",\"allowed_providers\":[\"nope\"]}", 404, "nope"),
            ("{\"end_user_id\":\"u\",\"origin\":\"\(Self.frontEnd)\",\"allowed_providers\":\"acme\"}", 400, "allowed_providers"),
            ("{\"end_user_id\":\"u\",\"origin\":\"\(Self.frontEnd)\",\"scopes\":[\"a b\"]}", 400, "scopes"),
            ("{\"end_user_id\":\"u\",\"origin\":\"\(Self.frontEnd)\",\"expires_in\":3600}", 400, "expires_in"),
            ("{\"end_user_id\":\"u\",\"origin\":\"\(Self.frontEnd)\",\"return_to\":\"https://evil.example/x\"}", 400, "return_to"),
            ("{\"end_user_id\":\"u\",\"origin\":\"\(Self.frontEnd)\",\"account_id\":\"acme:nobody\"}", 404, "account"),
            ("{\"end_user_id\":\"u\",\"origin\":\"\(Self.frontEnd)\",\"tags\":{\"a\":1}}", 400, "tags"),
            ("[1]", 400, "JSON object"),
        ]
        for (body, status, named) in cases {
            let answer = await s.create(body)
            #expect(answer.status == status, "\(body)")
            #expect((answer.json["message"] as? String ?? "").contains(named), "\(body): \(answer.json)")
        }
        let made = await s.create(ok)
        #expect(made.status == 201)
        let token = try #require(made.json["token"] as? String)
        #expect(token.utf8.count >= 43)
        #expect(made.json["connect_url"] as? String == "http://localhost:8080/connect?session=" + token)
        // 30 minutes by default; the token itself is stored nowhere, only its hash.
        #expect(made.json["expires_at"] as? String == RFC3339Date.format(s.clock.now.addingTimeInterval(1800)))
        let journal = try String(contentsOfFile: s.broker.dataDirectory + "/flows/journal.jsonl", encoding: .utf8)
        #expect(journal.contains(AuthorizationService.connectSessionKey(token: token)) && !journal.contains(token))
    }

    @Test func aSessionConnectsOnceForItsEndUserAndPostsOnlyToItsOrigin() async throws {
        let s = try Self.setUp()
        let token = try await s.session(",\"tags\":{\"plan\":\"pro\"},\"allowed_providers\":[\"acme\"]")
        let browser = s.browser()
        let page = try #require(await browser.get("/connect?session=" + token, headers: Self.html))
        #expect(page.status == 200)
        // Only the allowed provider is offered.
        #expect(page.body.contains("data-provider=\"acme\"") && !page.body.contains("data-provider=\"other\""))
        let start = try #require(await browser.get("/connect/start?provider=acme", headers: Self.html))
        #expect(start.status == 302)
        let startLocation = try #require(start.header("Location"))
        let callback = try #require(await browser.visitProvider(startLocation))
        let end = try #require(await browser.get(callback, headers: [("Accept", "text/html")]))
        #expect(end.status == 200)
        let outcome = Self.outcome(end.body)
        #expect(outcome["status"] == "connected" && outcome["origin"] == Self.frontEnd)
        let account = try #require(outcome["account"])
        let state = try #require(outcome["state"])
        #expect(account.hasPrefix("acme:"))
        // The page allows its one script by hash, and nothing else.
        #expect(end.header("Content-Security-Policy")?.contains("script-src 'sha256-") == true)
        // The back end made the session: the browser gets no right to the token.
        #expect(end.setCookies["tb_session"] == nil)
        #expect(await browser.get("/account?id=" + account)?.status == 401)
        // The back end matches the outcome by state: the session's end user and tags are on the flow and the account.
        let flow = try #require(await TestHTTP.send(port: s.broker.port, target: "/flows/" + state, headers: Self.api))
        let flowJSON = Self.json(flow.body)
        #expect(flowJSON["status"] as? String == "completed" && flowJSON["account"] as? String == account)
        #expect(flowJSON["end_user_id"] as? String == "user-7" && flowJSON["tags"] as? [String: String] == ["plan": "pro"])
        let read = try #require(await TestHTTP.send(port: s.broker.port, target: "/account?id=" + account, headers: Self.api))
        #expect(Self.json(read.body)["end_user_id"] as? String == "user-7")

        // Single use: the same URL again, in any browser, is 410 and starts nothing.
        for opener in ["", "&opener_origin=https%3A%2F%2Fother.example", "&opener_origin=https%3A%2F%2Fevil.example"] {
            let again = try #require(await s.browser().get("/connect?session=" + token + opener, headers: Self.html))
            #expect(again.status == 410 && again.header("Location") == nil)
            let told = Self.outcome(again.body)
            #expect(told["status"] == "failed" && told["error"] == "expired" && told["account"] == nil)
            // Told only to a listed front-end origin that says it opened the page; never to another.
            #expect(told["origin"] == (opener.contains("other.example") ? "https://other.example" : nil), "\(opener)")
        }
        // The provider choice was taken too.
        #expect(await browser.get("/connect/start?provider=acme", headers: Self.html)?.status == 410)
    }

    @Test func aDenialAndAProviderTheSessionDoesNotAllowEndOnTheEndPageWithTheirCodes() async throws {
        let s = try Self.setUp()
        s.provider.set { $0.deny = true }
        let denied = try await s.run(try await s.session(), in: s.browser())
        #expect(denied.status == 403)
        let outcome = Self.outcome(denied.body)
        #expect(outcome["status"] == "failed" && outcome["error"] == "access_denied" && outcome["origin"] == Self.frontEnd)
        let state = try #require(outcome["state"])
        let flow = try #require(await TestHTTP.send(port: s.broker.port, target: "/flows/" + state, headers: Self.api))
        #expect(Self.json(flow.body)["status"] as? String == "failed" && Self.json(flow.body)["error"] as? String == "access_denied")

        s.provider.set { $0.deny = false }
        let browser = s.browser()
        let token = try await s.session(",\"allowed_providers\":[\"acme\"]")
        #expect(await browser.get("/connect?session=" + token, headers: Self.html)?.status == 200)
        let refused = try #require(await browser.get("/connect/start?provider=other", headers: Self.html))
        #expect(refused.status == 400 && refused.header("Location") == nil)
        #expect(Self.outcome(refused.body)["error"] == "bad_request" && Self.outcome(refused.body)["origin"] == Self.frontEnd)
    }

    @Test func withoutAnOpenerTheEndPageGoesOnToReturnToWithTheOutcomeFailuresToo() async throws {
        let s = try Self.setUp()
        let connected = Self.outcome(
            try await s.run(try await s.session(",\"return_to\":\"https://app.example.com/done?x=1\""), in: s.browser()).body)
        let state = try #require(connected["state"])
        let account = try #require(connected["account"])
        #expect(
            connected["next"] == "https://app.example.com/done?x=1&state=" + state + "&account="
                + account.replacingOccurrences(of: ":", with: "%3A"))
        s.provider.set { $0.deny = true }
        let denied = Self.outcome(
            try await s.run(try await s.session(",\"return_to\":\"https://app.example.com/done\""), in: s.browser()).body)
        let deniedState = try #require(denied["state"])
        #expect(denied["next"] == "https://app.example.com/done?state=" + deniedState + "&error=access_denied")
        // The script that follows it runs only without an opener; it is the one the policy allows by hash.
        #expect(ConnectEndPage.script.contains("if (d.next) window.location.replace(d.next);"))
    }

    @Test func aSessionPastItsExpiryIsGoneAndStartsNoFlow() async throws {
        let s = try Self.setUp()
        let token = try await s.session(",\"expires_in\":60")
        s.clock.advance(61)
        let late = try #require(await s.browser().get("/connect?session=" + token, headers: Self.html))
        #expect(late.status == 410 && Self.outcome(late.body)["error"] == "expired")
        // An API client (curl) gets the JSON error.
        let json = try #require(await TestHTTP.send(port: s.broker.port, target: "/connect?session=" + token))
        #expect(json.status == 410 && Self.json(json.body)["error"] as? String == "session_expired")
        // Opened in time, chosen too late.
        let browser = s.browser()
        let second = try await s.session(",\"expires_in\":60")
        #expect(await browser.get("/connect?session=" + second, headers: Self.html)?.status == 200)
        s.clock.advance(61)
        let chosen = try #require(await browser.get("/connect/start?provider=acme", headers: Self.html))
        #expect(chosen.status == 410 && chosen.header("Location") == nil)
        // Another browser cannot use the first one's provider choice.
        let third = try await s.session()
        #expect(await browser.get("/connect?session=" + third, headers: Self.html)?.status == 200)
        #expect(await s.browser().get("/connect/start?provider=acme", headers: Self.html)?.status == 410)
    }

    @Test func aReconnectSessionGoesStraightToItsProviderAndMustComeBackAsTheSameAccount() async throws {
        let s = try Self.setUp()
        s.provider.set { $0.users = .fixed("alice") }
        let first = Self.outcome(try await s.run(try await s.session(), in: s.browser()).body)
        let account = try #require(first["account"])
        #expect(account == "acme:alice")

        let renew = try await s.session(",\"account_id\":\"\(account)\",\"scopes\":[\"read\",\"write\"]")
        let browser = s.browser()
        let straight = try #require(await browser.get("/connect?session=" + renew, headers: Self.html))
        #expect(straight.status == 302)
        let location = try #require(straight.header("Location"))
        // The session's scopes replace the provider's for this sign-in.
        #expect(URLComponents(string: location)?.queryItems?.first { $0.name == "scope" }?.value == "read write")
        let callback = try #require(await browser.visitProvider(location))
        let renewed = try #require(await browser.get(callback, headers: [("Accept", "text/html")]))
        let again = Self.outcome(renewed.body)
        #expect(again["status"] == "connected" && again["account"] == account)

        s.provider.set { $0.users = .fixed("mallory") }
        let mismatch = try await s.run(try await s.session(",\"account_id\":\"\(account)\""), in: s.browser(), choose: nil)
        #expect(mismatch.status == 409 && Self.outcome(mismatch.body)["error"] == "account_mismatch")
        let other = await TestHTTP.send(port: s.broker.port, target: "/account?id=acme:mallory", headers: Self.api)
        #expect(other?.status == 404)
    }

    @Test func aFlowABackEndStartedGivesTheBrowserThatFinishedItNoToken() async throws {
        let s = try Self.setUp()
        let started = try #require(
            await TestHTTP.send(
                port: s.broker.port, method: "POST", target: "/authorize", headers: Self.api, body: "{\"provider\":\"acme\"}"))
        let authorizeURL = try #require(Self.json(started.body)["authorize_url"] as? String)
        let browser = s.browser()
        let callback = try #require(await browser.visitProvider(authorizeURL))
        let done = try #require(await browser.get(callback, headers: [("Accept", "application/json")]))
        #expect(done.status == 200)
        let account = try #require(Self.json(done.body)["id"] as? String)
        #expect(done.setCookies["tb_session"] == nil)
        #expect(await browser.get("/account?id=" + account)?.status == 401)
        // A flow the browser started itself still gives it its account.
        let own = s.browser()
        let connected = try #require(await own.connect(provider: "acme"))
        #expect(connected.setCookies["tb_session"] != nil)
    }

    @Test func withTheConnectPageOffOnlyAPIKeysReadTokensWhileSessionsStillWork() async throws {
        let s = try Self.setUp(environment: ["BROKER_CONNECT_PAGE": "off"])
        let browser = s.browser()
        #expect(await browser.get("/")?.status == 404)
        #expect(await browser.authorize("provider=acme")?.status == 405)
        let end = try await s.run(try await s.session(), in: browser)
        let account = try #require(Self.outcome(end.body)["account"])
        #expect(await browser.get("/account?id=" + account)?.status == 401)
        #expect(await TestHTTP.send(port: s.broker.port, target: "/account?id=" + account, headers: Self.api)?.status == 200)
    }

    @Test func providersAnswerCORSForListedOriginsAndTheScriptIsServed() async throws {
        let s = try Self.setUp()
        let listed = try #require(await TestHTTP.send(port: s.broker.port, target: "/providers", headers: [("Origin", Self.frontEnd)]))
        #expect(listed.status == 200 && listed.header("Access-Control-Allow-Origin") == Self.frontEnd)
        let other = try #require(
            await TestHTTP.send(port: s.broker.port, target: "/providers", headers: [("Origin", "https://evil.example")]))
        #expect(other.status == 200 && other.header("Access-Control-Allow-Origin") == nil)
        let preflight = try #require(
            await TestHTTP.send(
                port: s.broker.port, method: "OPTIONS", target: "/providers",
                headers: [("Origin", Self.frontEnd), ("Access-Control-Request-Method", "GET")]))
        #expect(preflight.status == 204 && preflight.header("Access-Control-Allow-Origin") == Self.frontEnd)
        let script = try #require(await TestHTTP.send(port: s.broker.port, target: "/connect.js"))
        #expect(script.status == 200 && script.header("Content-Type")?.hasPrefix("text/javascript") == true)
        #expect(script.body.contains("TokenBroker") && script.body.contains("event.origin !== broker.origin"))
    }

    @Test func theBackEndLearnsTheOutcomeByWebhookWithTheStateEndUserAndTags() async throws {
        let receiver = try WebhookReceiver()
        let s = try Self.setUp(environment: [
            "BROKER_WEBHOOK_URL": receiver.url, "BROKER_WEBHOOK_SECRET": WebhookEndToEndTests.secret,
            "BROKER_WEBHOOK_RETRY_BASE": "0.1", "BROKER_WEBHOOK_RETRY_CAP": "0.4",
        ])
        let connected = Self.outcome(try await s.run(try await s.session(",\"tags\":{\"team\":\"a\"}"), in: s.browser()).body)
        s.provider.set { $0.deny = true }
        let denied = Self.outcome(try await s.run(try await s.session(), in: s.browser()).body)
        // A sign-in the browser started itself sends no flow.completed: no back end knows its state.
        s.provider.set { $0.deny = false }
        #expect(await s.browser().connect(provider: "acme")?.status == 200)
        // account.connected, flow.completed, flow.failed, account.reconnected; then nothing is left to send.
        #expect(await eventually { receiver.accepted.count >= 4 })
        #expect(
            await eventually {
                let metrics = await TestHTTP.send(port: s.broker.port, target: "/metrics")?.body ?? ""
                return RefreshEndToEndTests.metric(metrics, "broker_webhook_outbox_pending") == 0
            })
        let events = receiver.accepted
        let completed = events.filter { $0.type == "flow.completed" }
        #expect(completed.count == 1)
        let event = try #require(completed.first)
        #expect(event.data("state") as? String == connected["state"] && event.data("account_id") as? String == connected["account"])
        #expect(event.data("end_user_id") as? String == "user-7" && event.data("tags") as? [String: String] == ["team": "a"])
        let failed = try #require(events.first { $0.type == "flow.failed" })
        #expect(failed.data("state") as? String == denied["state"] && failed.data("error") as? String == "access_denied")
        #expect(failed.data("end_user_id") as? String == "user-7")
        await s.broker.stop()
        await receiver.stop()
    }

    @Test func aSessionOutlivesARestartOfTheBroker() async throws {
        let s = try Self.setUp()
        let token = try await s.session()
        await s.broker.stop()
        let provider = s.provider
        let restarted = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry())}}",
            environment: ["FAKE_ACME_SECRET": Self.clientSecret, "BROKER_CORS_ORIGINS": Self.frontEnd],
            dataDirectory: s.broker.dataDirectory, now: s.clock.function)
        let again = Setup(provider: provider, broker: restarted, clock: s.clock)
        let end = try await again.run(token, in: again.browser())
        #expect(Self.outcome(end.body)["status"] == "connected")
    }
}
