import BrokerCore
import BrokerCrypto
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// The hosted page's form for `api_key`, `basic` and `bearer` providers, over real sockets against the fake credential
/// provider: a browser (a cookie jar) opens a connect session, chooses the provider, fills the form in and posts it to
/// the broker's own origin; the credential is verified before it is stored, the flow ends as a sign-in's does, and no
/// value shows in `/accounts`, the log, the webhooks or the page.
@Suite(.scoped) struct ConnectCredentialFormTests {
    typealias Kind = CredentialAccountsTests.Kind
    static let frontEnd = "https://app.example.com"
    static let html = [("Accept", "text/html,application/xhtml+xml")]
    static let api = CredentialAccountsTests.api

    struct Setup {
        let inner: CredentialAccountsTests.Setup
        var broker: BrokerHarness { inner.broker }

        /// A connect session for end user `user-9`; its token.
        func session(_ extra: String = "") async throws -> String {
            let reply = try await inner.post(
                "/connect/sessions", "{\"end_user_id\":\"user-9\",\"origin\":\"\(ConnectCredentialFormTests.frontEnd)\"\(extra)}")
            #expect(reply.status == 201, "\(reply.body)")
            return try #require(CredentialAccountsTests.json(reply.body)["token"] as? String)
        }

        /// Opens the session's page in `browser` and chooses `provider`: the form.
        func form(_ provider: String, in browser: Browser, session extra: String = "") async throws -> TestHTTP.Reply {
            let token = try await session(extra)
            let picker = try #require(await browser.get("/connect?session=" + token, headers: ConnectCredentialFormTests.html))
            #expect(picker.status == 200 && picker.body.contains("data-provider=\"\(provider)\""), "\(picker.body)")
            return try #require(await browser.get("/connect/start?provider=" + provider, headers: ConnectCredentialFormTests.html))
        }
    }

    static func setUp() async throws -> Setup {
        // The credential tests' broker and providers, with a front end allowed to run connect sessions.
        Setup(inner: try await CredentialAccountsTests.setUp(environment: ["BROKER_CORS_ORIGINS": frontEnd]))
    }

    /// The value of the form's hidden input `name`.
    static func hidden(_ name: String, in page: String) -> String? {
        guard let range = page.range(of: "name=\"\(name)\" value=\"") else { return nil }
        return String(page[range.upperBound...].prefix { $0 != "\"" })
    }

    /// The form body: the page's state and token, then `values` (form-encoded, so a control byte survives the trip).
    static func body(_ page: String, _ values: [(String, String)]) -> String {
        let pairs = [("state", hidden("state", in: page) ?? ""), ("csrf", hidden("csrf", in: page) ?? "")] + values
        return pairs.map { PercentEncoding.rfc3986($0.0) + "=" + PercentEncoding.rfc3986($0.1) }.joined(separator: "&")
    }

    static func post(_ browser: Browser, _ body: String, contentType: String = "application/x-www-form-urlencoded") async throws
        -> TestHTTP.Reply
    {
        let reply = try #require(
            await TestHTTP.send(
                port: browser.brokerPort, method: "POST", target: "/connect/credentials",
                headers: browser.jar.header + html + [("Content-Type", contentType)], body: body))
        browser.jar.absorb(reply)
        return reply
    }

    /// The values the fake accepts, as form fields.
    static func accepted(_ kind: Kind) -> [(String, String)] {
        switch kind {
        case .keyHeader, .keyQuery: [("api_key", CredentialAccountsTests.apiKey)]
        case .basic: [("username", CredentialAccountsTests.username), ("password", CredentialAccountsTests.password)]
        case .bearer: [("token", CredentialAccountsTests.token)]
        }
    }

    @Test(arguments: [Kind.keyHeader, .basic, .bearer])
    func eachKindConnectsThroughTheFormAsASignInWould(kind: Kind) async throws {
        let s = try await Self.setUp()
        let browser = Browser(brokerPort: s.broker.port, providerPort: s.inner.fake.port)
        let form = try await s.form(kind.rawValue, in: browser)
        #expect(form.status == 200, "\(form.body)")
        // The form: one input per field, labelled by its description; secrets masked; nothing remembered by the browser.
        #expect(form.body.contains("action=\"/connect/credentials\"") && form.body.contains("method=\"post\""))
        #expect(form.body.contains("<form") && form.body.contains("autocomplete=\"off\""))
        switch kind {
        case .basic:
            #expect(form.body.contains("<label for=\"tb-field-username\">The user name</label>"))
            #expect(form.body.contains("name=\"username\" type=\"text\"") && form.body.contains("name=\"password\" type=\"password\""))
        case .bearer: #expect(form.body.contains("name=\"token\" type=\"password\""))
        default:
            #expect(form.body.contains("<label for=\"tb-field-api_key\">The API key</label>") && form.body.contains("type=\"password\""))
        }
        // The policy of every page, unchanged: no script at all, forms to the broker only.
        #expect(form.header("Content-Security-Policy") == PageAppearance.standard.contentSecurityPolicy)
        #expect(!form.body.contains("<script"))
        #expect(form.setCookies["tb_connect_form"] != nil)
        let state = try #require(Self.hidden("state", in: form.body))
        let pending = try #require(await TestHTTP.send(port: s.broker.port, target: "/flows/" + state, headers: Self.api))
        #expect(CredentialAccountsTests.json(pending.body)["status"] as? String == "pending")

        let end = try await Self.post(browser, Self.body(form.body, Self.accepted(kind)))
        #expect(end.status == 200, "\(end.body)")
        let outcome = ConnectSessionTests.outcome(end.body)
        #expect(outcome["status"] == "connected" && outcome["origin"] == Self.frontEnd && outcome["state"] == state)
        let account = try #require(outcome["account"])
        if let uid = kind.expectedUID { #expect(account == "\(kind.rawValue):\(uid)") }
        // Verified at the provider before it was stored.
        #expect(
            s.inner.fake.state.calls.count == 1 && s.inner.fake.state.calls[0].accepted && s.inner.fake.state.calls[0].path.hasSuffix("/me")
        )
        // The outcome the back end reads, with the session's end user.
        let flow = try #require(await TestHTTP.send(port: s.broker.port, target: "/flows/" + state, headers: Self.api))
        let flowJSON = CredentialAccountsTests.json(flow.body)
        #expect(flowJSON["status"] as? String == "completed" && flowJSON["account"] as? String == account)
        #expect(flowJSON["end_user_id"] as? String == "user-9")
        // Proxied with the credential placed as the provider declares.
        let proxied = try #require(
            await TestHTTP.send(
                port: s.broker.port, target: "/proxy/items",
                headers: [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Broker-Account", account)]))
        #expect(proxied.status == 200, "\(proxied.body)")
        let call = try #require(s.inner.fake.state.calls.last)
        switch kind {
        case .basic:
            let pair = Base64.encode(Array("\(CredentialAccountsTests.username):\(CredentialAccountsTests.password)".utf8))
            #expect(call.accepted && call.authorization == "Basic " + pair)
        case .bearer: #expect(call.accepted && call.authorization == "Bearer " + CredentialAccountsTests.token)
        default: #expect(call.accepted && call.authorization == "Token " + CredentialAccountsTests.apiKey)
        }
        // The webhooks a sign-in fires: the account connected and the flow completed, with the state.
        #expect(
            await eventually {
                let types = s.inner.receiver.received.map(\.type)
                return types.contains("account.connected") && types.contains("flow.completed")
            })
        #expect(s.broker.log.contains(#""msg":"credential stored""#) && s.broker.log.contains(#""mode":"connect_session""#))
        try await s.inner.expectNoSecretLeaked([form, end, proxied])
        // The form is used up: posting it again starts nothing.
        let again = try await Self.post(browser, Self.body(form.body, Self.accepted(kind)))
        #expect(again.status == 403 || again.status == 410)
        #expect(s.inner.fake.state.calls.count == 2)
        // Stopped, the broker has written its audit file: the completion is there, as a sign-in's, and no value is.
        await s.broker.stop()
        let audit = s.inner.audit
        #expect(audit.contains(#""event":"flow_completed""#) && audit.contains(account), "\(audit)")
        for secret in CredentialAccountsTests.secrets { #expect(!audit.contains(secret)) }
    }

    @Test func aRefusedKeyIsShownOnTheFormWithTheProvidersStatusAndNothingIsStored() async throws {
        let s = try await Self.setUp()
        let browser = Browser(brokerPort: s.broker.port, providerPort: s.inner.fake.port)
        // A session limited to the provider, as a back end that knows which one its user connects makes it.
        let form = try await s.form("keyhdr", in: browser, session: ",\"allowed_providers\":[\"keyhdr\"]")
        #expect(!form.body.contains("data-provider=\"basicp\""))
        let refused = try await Self.post(browser, Self.body(form.body, [("api_key", "not-the-key-SENTINEL")]))
        #expect(refused.status == 422, "\(refused.body)")
        #expect(refused.body.contains("refused these credentials (HTTP 401)"))
        #expect(!refused.body.contains("not-the-key") && !s.broker.log.contains("not-the-key"))
        #expect(!refused.body.contains("tb-result"), "a refusal is not the end of the flow")
        let listing = try await s.inner.get("/accounts")
        #expect(listing.body.contains(#""accounts":[]"#), "\(listing.body)")
        // The person corrects it on the same form, for the same flow.
        let state = try #require(Self.hidden("state", in: refused.body))
        #expect(state == Self.hidden("state", in: form.body))
        let end = try await Self.post(browser, Self.body(refused.body, Self.accepted(.keyHeader)))
        #expect(ConnectSessionTests.outcome(end.body)["status"] == "connected", "\(end.body)")
        #expect(s.inner.fake.state.calls.map(\.accepted) == [false, true])
    }

    @Test func theFifthRefusedKeyEndsTheFlowAsFailed() async throws {
        let s = try await Self.setUp()
        let browser = Browser(brokerPort: s.broker.port, providerPort: s.inner.fake.port)
        let form = try await s.form("keyhdr", in: browser)
        var page = form
        let state = try #require(Self.hidden("state", in: page.body))
        for attempt in 1...ConnectSessionHandlers.maximumRefusals {
            page = try await Self.post(browser, Self.body(page.body, [("api_key", "not-the-key-\(attempt)")]))
            #expect(page.status == 422, "\(attempt)")
            #expect(page.body.contains("tb-result") == (attempt == ConnectSessionHandlers.maximumRefusals), "\(attempt)")
        }
        // The end page tells the opener, and the back end reads the failure by the state.
        let outcome = ConnectSessionTests.outcome(page.body)
        #expect(outcome["status"] == "failed" && outcome["error"] == "credential_invalid" && outcome["state"] == state)
        let flow = try #require(await TestHTTP.send(port: s.broker.port, target: "/flows/" + state, headers: Self.api))
        let flowJSON = CredentialAccountsTests.json(flow.body)
        #expect(flowJSON["status"] as? String == "failed" && flowJSON["error"] as? String == "credential_invalid", "\(flow.body)")
        #expect(await eventually { s.inner.receiver.received.contains { $0.type == "flow.failed" } })
        #expect(s.inner.fake.state.calls.count == ConnectSessionHandlers.maximumRefusals)
        // Nothing more can be tried on it, even with the form's own state and token.
        let after = try await Self.post(browser, Self.body(form.body, Self.accepted(.keyHeader)))
        #expect(after.status == 403 || after.status == 410)
        #expect(s.inner.fake.state.calls.count == ConnectSessionHandlers.maximumRefusals)
        let listing = try await s.inner.get("/accounts")
        #expect(listing.body.contains(#""accounts":[]"#))
    }

    @Test func aWrongOrMissingFieldIsNamedOnTheFormWithoutEchoingASecret() async throws {
        let s = try await Self.setUp()
        let browser = Browser(brokerPort: s.broker.port, providerPort: s.inner.fake.port)
        var page = try await s.form("basicp", in: browser)
        let cases: [([(String, String)], String)] = [
            (
                [("username", "ada"), ("password", "SENTINEL-CTRL\u{1}x")],
                #"The credential field &quot;password&quot; contains a control character"#
            ),
            ([("username", "ada")], #"The credential field &quot;password&quot; is required"#),
            ([("username", "ada"), ("password", String(repeating: "p", count: 5000))], "is longer than 4096 bytes"),
            ([("username", "ada"), ("password", "SENTINEL-X"), ("apikey", "x")], #"Unknown credential field &quot;apikey&quot;"#),
            ([("username", "a:da"), ("password", "SENTINEL-X")], "contains a colon"),
        ]
        for (values, message) in cases {
            let reply = try await Self.post(browser, Self.body(page.body, values))
            #expect(reply.status == 400, "\(values.map(\.0))")
            #expect(reply.body.contains(message), "\(reply.body)")
            #expect(!reply.body.contains("SENTINEL") && !reply.body.contains("ppppp"), "a secret was echoed")
            page = reply
        }
        // The user name (not a secret) is put back; nothing was asked of the provider.
        #expect(page.body.contains("name=\"username\" type=\"text\"") && page.body.contains("value=\"a:da\""))
        #expect(s.inner.fake.state.calls.isEmpty)
        #expect(!s.broker.log.contains("SENTINEL"))
    }

    /// A provider with a per-account setting asks for it on the form, above the fields: an unfit value is refused on
    /// the form naming the setting, without showing the value and without a call; a fit one is the host verified at
    /// and is kept with the account.
    @Test func theFormAsksForTheSettingsAndRefusesAnUnfitOneWithoutACall() async throws {
        let token = "SENTINEL-FORM-SETTING-TOKEN"
        let fake = try FakeCredentialProvider.scoped(apiKey: "k", token: token, username: "u", password: "p")
        let broker = try BrokerHarness(providersJSON: fake.settingsProvidersFile, environment: ["BROKER_CORS_ORIGINS": Self.frontEnd])
        let created = try #require(
            await TestHTTP.send(
                port: broker.port, method: "POST", target: "/connect/sessions", headers: Self.api,
                body: "{\"end_user_id\":\"user-9\",\"origin\":\"\(Self.frontEnd)\",\"allowed_providers\":[\"subdom\"]}"))
        #expect(created.status == 201, "\(created.body)")
        let session = try #require(CredentialAccountsTests.json(created.body)["token"] as? String)
        let browser = Browser(brokerPort: broker.port, providerPort: fake.port)
        _ = try #require(await browser.get("/connect?session=" + session, headers: Self.html))
        let form = try #require(await browser.get("/connect/start?provider=subdom", headers: Self.html))
        #expect(form.status == 200, "\(form.body)")
        #expect(form.body.contains("<label for=\"tb-setting-subdomain\">Your team"), "\(form.body)")
        #expect(form.body.contains("name=\"setting:subdomain\" type=\"text\"") && form.body.contains("name=\"token\" type=\"password\""))
        #expect(form.header("Content-Security-Policy") == PageAppearance.standard.contentSecurityPolicy && !form.body.contains("<script"))

        var page = form
        for bad in ["acme.evil.com", "a@b", "%2e", ""] {
            let reply = try await Self.post(browser, Self.body(page.body, [("setting:subdomain", bad), ("token", token)]))
            #expect(reply.status == 400, "\(bad): \(reply.body)")
            #expect(reply.body.contains("The setting &quot;subdomain&quot;"), "\(reply.body)")
            #expect(
                !reply.body.contains("evil") && !reply.body.contains("a@b") && !reply.body.contains("%2e")
                    && !reply.body.contains("SENTINEL"))
            page = reply
        }
        let unknown = try await Self.post(
            browser, Self.body(page.body, [("setting:subdomain", "acme"), ("setting:shop", "x"), ("token", token)]))
        #expect(unknown.status == 400 && unknown.body.contains("The setting &quot;shop&quot; is not known"), "\(unknown.body)")
        #expect(fake.state.calls.isEmpty, "a refused setting reached the provider")

        // A credential the provider refuses at a fit host: the accepted setting is put back, the secret is not.
        let refused = try await Self.post(browser, Self.body(unknown.body, [("setting:subdomain", "acme"), ("token", "wrong")]))
        #expect(
            refused.status == 422 && refused.body.contains("name=\"setting:subdomain\" type=\"text\"")
                && refused.body.contains("value=\"acme\""))
        let end = try await Self.post(browser, Self.body(refused.body, [("setting:subdomain", "acme"), ("token", token)]))
        #expect(end.status == 200, "\(end.body)")
        let account = try #require(ConnectSessionTests.outcome(end.body)["account"])
        #expect(fake.state.calls.map(\.host) == ["acme.localhost:\(fake.port)", "acme.localhost:\(fake.port)"])
        let stored = try #require(await TestHTTP.send(port: broker.port, target: "/account?id=" + account, headers: Self.api))
        #expect(CredentialAccountsTests.json(stored.body)["settings"] as? [String: String] == ["subdomain": "acme"], "\(stored.body)")
        #expect(!broker.log.contains("SENTINEL") && !broker.log.contains("evil"))
        // A reconnect keeps its account's host: the form asks for the secret again, not for the setting.
        let again = try #require(
            await TestHTTP.send(
                port: broker.port, method: "POST", target: "/connect/sessions", headers: Self.api,
                body: "{\"end_user_id\":\"user-9\",\"origin\":\"\(Self.frontEnd)\",\"account_id\":\"\(account)\"}"))
        #expect(again.status == 201, "\(again.body)")
        let reconnect = try #require(CredentialAccountsTests.json(again.body)["token"] as? String)
        let second = Browser(brokerPort: broker.port, providerPort: fake.port)
        // A reconnect has its one provider: the page is the form at once.
        let refill = try #require(await second.get("/connect?session=" + reconnect, headers: Self.html))
        #expect(refill.status == 200 && refill.body.contains("name=\"token\" type=\"password\""), "\(refill.body)")
        #expect(!refill.body.contains("setting:subdomain") && !refill.body.contains("SENTINEL"), "\(refill.body)")
        let moved = try await Self.post(second, Self.body(refill.body, [("setting:subdomain", "globex"), ("token", token)]))
        #expect(moved.status == 400, "\(moved.body)")
        let renewed = try await Self.post(second, Self.body(moved.body, [("token", token)]))
        #expect(renewed.status == 200 && ConnectSessionTests.outcome(renewed.body)["account"] == account, "\(renewed.body)")
        #expect(fake.state.calls.map(\.host).allSatisfy { $0 == "acme.localhost:\(fake.port)" }, "\(fake.state.calls)")
    }

    /// Settings a back end fixes on the connect session are the form's: it does not ask for them, a post that gives
    /// another value is refused without a call, and the credential is verified and stored at the session's host.
    @Test func settingsFixedByTheSessionAreNotAskedForNorChangedOnTheForm() async throws {
        let token = "SENTINEL-FIXED-SETTING-TOKEN"
        let fake = try FakeCredentialProvider.scoped(apiKey: "k", token: token, username: "u", password: "p")
        let broker = try BrokerHarness(providersJSON: fake.settingsProvidersFile, environment: ["BROKER_CORS_ORIGINS": Self.frontEnd])
        let created = try #require(
            await TestHTTP.send(
                port: broker.port, method: "POST", target: "/connect/sessions", headers: Self.api,
                body: "{\"end_user_id\":\"user-9\",\"origin\":\"\(Self.frontEnd)\",\"allowed_providers\":[\"subdom\"],"
                    + "\"settings\":{\"subdomain\":\"globex\"}}"))
        #expect(created.status == 201, "\(created.body)")
        let session = try #require(CredentialAccountsTests.json(created.body)["token"] as? String)
        let browser = Browser(brokerPort: broker.port, providerPort: fake.port)
        _ = try #require(await browser.get("/connect?session=" + session, headers: Self.html))
        let form = try #require(await browser.get("/connect/start?provider=subdom", headers: Self.html))
        #expect(form.status == 200 && form.body.contains("name=\"token\" type=\"password\""), "\(form.body)")
        #expect(!form.body.contains("setting:subdomain"), "\(form.body)")
        let moved = try await Self.post(browser, Self.body(form.body, [("setting:subdomain", "acme"), ("token", token)]))
        #expect(moved.status == 400, "\(moved.body)")
        #expect(fake.state.calls.isEmpty, "a refused post reached the provider")
        let end = try await Self.post(browser, Self.body(moved.body, [("token", token)]))
        #expect(end.status == 200, "\(end.body)")
        let account = try #require(ConnectSessionTests.outcome(end.body)["account"])
        #expect(fake.state.calls.map(\.host) == ["globex.localhost:\(fake.port)"])
        let stored = try #require(await TestHTTP.send(port: broker.port, target: "/account?id=" + account, headers: Self.api))
        #expect(CredentialAccountsTests.json(stored.body)["settings"] as? [String: String] == ["subdomain": "globex"], "\(stored.body)")
    }

    /// The form of a preset with a setting and a fixed field: Freshdesk asks for its domain, masks the user name
    /// (its API key) and fills in the password `X` that Freshdesk ignores; nothing secret is shown.
    @Test func aFixedFieldComesFilledInAndAPresetsSettingIsAskedFor() throws {
        let file = #"{"providers": {"freshdesk": {}}}"#
        let preset = try #require(
            try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8)).provider(named: "freshdesk"))
        let html = ConnectCredentialForm(
            provider: preset.name, displayName: preset.displayedName, fields: preset.credentials?.fields ?? [],
            settings: preset.accountSettings, state: "s", csrf: "c", problem: nil, kept: ["username": "SENTINEL-KEY"],
            appearance: .standard
        ).page().body
        #expect(html.contains("name=\"setting:domain\" type=\"text\""), "\(html)")
        #expect(html.contains("name=\"username\" type=\"password\"") && !html.contains("SENTINEL"))
        #expect(html.contains("name=\"password\" type=\"text\"") && html.contains("value=\"X\""))
    }

    @Test func aPostWithoutTheFormsCookieAndTokenIsRefusedWithoutACall() async throws {
        let s = try await Self.setUp()
        let browser = Browser(brokerPort: s.broker.port, providerPort: s.inner.fake.port)
        let form = try await s.form("keyhdr", in: browser)
        let good = Self.body(form.body, Self.accepted(.keyHeader))
        // Another browser (no cookie), a forged token, a JSON body, values in the query: 403 and no call.
        let stranger = Browser(brokerPort: s.broker.port, providerPort: s.inner.fake.port)
        #expect(try await Self.post(stranger, good).status == 403)
        let forged = good.replacingOccurrences(of: "csrf=", with: "csrf=x")
        #expect(try await Self.post(browser, forged).status == 403)
        #expect(try await Self.post(browser, good, contentType: "application/json").status == 403)
        let inQuery = try #require(
            await TestHTTP.send(
                port: s.broker.port, method: "POST", target: "/connect/credentials?" + good,
                headers: browser.jar.header + [("Content-Type", "application/x-www-form-urlencoded")], body: ""))
        #expect(inQuery.status == 403)
        #expect(s.inner.fake.state.calls.isEmpty)
        // The real form still works.
        let end = try await Self.post(browser, good)
        #expect(ConnectSessionTests.outcome(end.body)["status"] == "connected", "\(end.body)")
    }
}
