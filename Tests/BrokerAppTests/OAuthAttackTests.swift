import BrokerCore
import BrokerCrypto
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Attacks on the OAuth surface over real sockets: mix-up between two providers, the `iss`
/// parameter (RFC 9207), CSRF on `/callback`, and tampered session cookies.
@Suite(.scoped) struct OAuthAttackTests {
    static let clientSecret = "WEIBO-CLIENT-SECRET-SENTINEL-attacks"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
    static let issuerA = "https://a.example"
    static let issuerB = "https://b.example/tenant"

    /// Two fake OAuth 2.0 servers: `weibo` (A, the preset) and `acme` (B, a custom provider).
    struct Setup {
        let a: FakeOAuth2Provider
        let b: FakeOAuth2Provider
        let broker: BrokerHarness
        var browserA: Browser { Browser(brokerPort: broker.port, providerPort: a.port) }
        var browserB: Browser { Browser(brokerPort: broker.port, providerPort: b.port) }
    }

    /// `issuerA`: A has issuer `issuerA` (iss optional); `issuerB`: B has `issuerB` with `iss_parameter_supported`.
    static func setUp(issuerA hasIssuerA: Bool = false, issuerB hasIssuerB: Bool = false) throws -> Setup {
        let a = try FakeOAuth2Provider.scoped(.weibo(clientSecret: clientSecret))
        let b = try FakeOAuth2Provider.scoped(.weibo(clientSecret: clientSecret))
        let issuerA = hasIssuerA ? ", \"issuer\": \"\(Self.issuerA)\"" : ""
        let issuerB = hasIssuerB ? ", \"issuer\": \"\(Self.issuerB)\", \"iss_parameter_supported\": true" : ""
        let providers = """
            {"providers": {
              "weibo": {"client_id": "\("1234567890")", "client_secret": "${FAKE_WEIBO_SECRET}",
                        "authorize_url": "\(a.baseURL)/oauth2/authorize", "token_url": "\(a.baseURL)/oauth2/access_token",
                        "user_url": "\(a.baseURL)/2/account/get_uid.json", "revoke_url": "\(a.baseURL)/oauth2/revokeoauth2"\(issuerA)},
              "acme": {"kind": "oauth2", "client_id": "\("1234567890")", "client_secret": "${FAKE_WEIBO_SECRET}",
                       "authorize_url": "\(b.baseURL)/oauth2/authorize", "token_url": "\(b.baseURL)/oauth2/access_token",
                       "user_url": "\(b.baseURL)/2/account/get_uid.json", "user_id_field": "uid"\(issuerB)}
            }}
            """
        let broker = try BrokerHarness(providersJSON: providers, environment: ["FAKE_WEIBO_SECRET": clientSecret])
        return Setup(a: a, b: b, broker: broker)
    }

    /// A query value, percent-encoded.
    static func encoded(_ value: String) -> String {
        PercentEncoding.rfc3986(value)
    }

    static func accounts(_ s: Setup) async -> String {
        await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: api)?.body ?? ""
    }

    // MARK: Mix-up

    @Test func aCodeFromProviderBUnderProviderAsStateIsExchangedOnlyAtA() async throws {
        let s = try Self.setUp()
        let victim = s.browserA
        let startA = try #require(await victim.authorize("provider=weibo"))
        let callbackA = try #require(await victim.visitProvider(startA.header("Location")!))
        let stateA = try #require(URLComponents(string: callbackA)?.queryItems?.first { $0.name == "state" }?.value)
        let other = s.browserB
        let startB = try #require(await other.authorize("provider=acme"))
        let callbackB = try #require(await other.visitProvider(startB.header("Location")!))
        let codeB = try #require(URLComponents(string: callbackB)?.queryItems?.first { $0.name == "code" }?.value)

        // A's state (and A's flow cookie) with B's code: the flow says A, so only A is asked, and A refuses.
        let mixed = try #require(await victim.get("/callback?code=\(Self.encoded(codeB))&state=\(Self.encoded(stateA))"))
        #expect(mixed.status == 502)
        #expect(mixed.body.contains("\"error\":\"upstream_error\""))
        #expect(!mixed.body.contains("SENTINEL"))
        #expect(s.a.tokenCalls == 1)
        #expect(s.b.tokenCalls == 0)
        #expect(await Self.accounts(s) == "{\"accounts\":[],\"next_cursor\":null}")

        // B's code was never spent: B's own browser still completes B's flow, at B.
        let done = try #require(await other.get(callbackB))
        #expect(done.status == 200)
        #expect(done.body.contains("\"id\":\"acme:3733034601\""))
        #expect(s.b.tokenCalls == 1)
    }

    // MARK: iss (RFC 9207)

    @Test(arguments: [
        ("weibo", "&iss=" + OAuthAttackTests.encoded(OAuthAttackTests.issuerB)),  // B's issuer on A's flow
        ("weibo", "&iss=" + OAuthAttackTests.encoded(OAuthAttackTests.issuerA + "/")),  // no normalization
        ("weibo", "&iss=" + OAuthAttackTests.encoded("HTTPS://A.EXAMPLE")),
        ("acme", ""),  // B always sends iss: missing
        ("acme", "&iss=" + OAuthAttackTests.encoded(OAuthAttackTests.issuerA)),
        ("acme", "&iss=&iss=" + OAuthAttackTests.encoded(OAuthAttackTests.issuerB)),  // the first value counts
    ])
    func aWrongOrMissingIssIsRefusedBeforeAnyTokenCall(provider: String, iss: String) async throws {
        let s = try Self.setUp(issuerA: true, issuerB: true)
        let browser = provider == "weibo" ? s.browserA : s.browserB
        let start = try #require(await browser.authorize("provider=\(provider)"))
        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        let reply = try #require(await browser.get(callback + iss))
        #expect(reply.status == 400)
        #expect(reply.body.contains("\"error\":\"bad_request\""))
        #expect(reply.body.contains("iss"))
        #expect(s.a.tokenCalls + s.b.tokenCalls == 0)
        #expect(await Self.accounts(s) == "{\"accounts\":[],\"next_cursor\":null}")
    }

    @Test func aWrongIssOnAnErrorResponseIsRefusedToo() async throws {
        let s = try Self.setUp(issuerA: true, issuerB: true)
        s.a.set { $0.deny = true }
        let browser = s.browserA
        let start = try #require(await browser.authorize("provider=weibo"))
        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        #expect(callback.contains("error=access_denied"))
        let reply = try #require(await browser.get(callback + "&iss=" + Self.encoded(Self.issuerB)))
        #expect(reply.status == 400)
        #expect(reply.body.contains("iss"))
    }

    @Test(arguments: [("weibo", OAuthAttackTests.issuerA, "weibo:3733034601"), ("acme", OAuthAttackTests.issuerB, "acme:3733034601")])
    func theRightIssIsAccepted(provider: String, issuer: String, account: String) async throws {
        let s = try Self.setUp(issuerA: true, issuerB: true)
        let browser = provider == "weibo" ? s.browserA : s.browserB
        let start = try #require(await browser.authorize("provider=\(provider)"))
        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        let reply = try #require(await browser.get(callback + "&iss=" + Self.encoded(issuer)))
        #expect(reply.status == 200)
        #expect(reply.body.contains("\"id\":\"\(account)\""))
    }

    @Test func withoutAnIssuerOfItsOwnAProviderStillRefusesAnotherProvidersIss() async throws {
        let s = try Self.setUp(issuerB: true)
        let browser = s.browserA
        let start = try #require(await browser.authorize("provider=weibo"))
        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        let reply = try #require(await browser.get(callback + "&iss=" + Self.encoded(Self.issuerB)))
        #expect(reply.status == 400)
        #expect(reply.body.contains("iss"))
        #expect(s.a.tokenCalls == 0)
        // Any other iss cannot be checked without a configured issuer (RFC 9207 §2.4) and is ignored.
        let again = try #require(await browser.authorize("provider=weibo"))
        let callback2 = try #require(await browser.visitProvider(again.header("Location")!))
        #expect(await browser.get(callback2 + "&iss=" + Self.encoded("https://unrelated.example"))?.status == 200)
    }

    @Test(arguments: [
        ("\"iss_parameter_supported\": true", "iss_parameter_supported"),
        ("\"issuer\": \"https://b.example/?tenant=1\"", "issuer"),
        ("\"issuer\": \"b.example\"", "issuer"),
        ("\"issuer\": 5", "issuer"),
        ("\"iss_parameter_supported\": \"yes\", \"issuer\": \"https://b.example\"", "iss_parameter_supported"),
    ])
    func badIssuerSettingsStopStartUpNamingTheKey(setting: String, key: String) {
        let file = """
            {"providers": {"acme": {"kind": "oauth2", "client_id": "c", "client_secret": "s", "authorize_url": "https://b.example/a",
              "token_url": "https://b.example/t", "user_url": "https://b.example/u", \(setting)}}}
            """
        var caught: ProviderConfigurationError?
        do {
            _ = try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8))
        } catch {
            caught = error
        }
        #expect(caught?.provider == "acme")
        #expect(caught?.key == key)
    }

    // MARK: CSRF on /callback

    @Test func aCallbackWithoutThisBrowsersFlowCookieIsRefusedWithoutATokenCall() async throws {
        let s = try Self.setUp()
        let victim = s.browserA
        let attacker = s.browserA
        // The attacker runs a dance up to the provider's redirect and keeps the callback URL.
        let attackStart = try #require(await attacker.authorize("provider=weibo"))
        let attackCallback = try #require(await attacker.visitProvider(attackStart.header("Location")!))
        let attackCookie = try #require(attacker.jar.cookies["tb_flow"])

        // 1. The victim's browser, with no flow cookie at all.
        let bare = try #require(await TestHTTP.send(port: s.broker.port, target: attackCallback))
        #expect(bare.status == 400)
        #expect(bare.body.contains("\"error\":\"invalid_state\""))

        // 2. The victim's browser in the middle of its own flow (its own flow cookie).
        let second = try #require(await attacker.authorize("provider=weibo"))
        let secondCallback = try #require(await attacker.visitProvider(second.header("Location")!))
        _ = await victim.authorize("provider=weibo")
        let victimCookie = try #require(victim.jar.cookies["tb_flow"])
        #expect(victimCookie != attackCookie)
        let crossed = await TestHTTP.send(port: s.broker.port, target: secondCallback, headers: [("Cookie", "tb_flow=" + victimCookie)])
        #expect(crossed?.status == 400)

        // 3. A forged cookie naming the attacker's state with a guessed nonce.
        let third = try #require(await attacker.authorize("provider=weibo"))
        let thirdCallback = try #require(await attacker.visitProvider(third.header("Location")!))
        let thirdState = try #require(attacker.jar.cookies["tb_flow"]?.split(separator: ".").first)
        let forged = await TestHTTP.send(
            port: s.broker.port, target: thirdCallback,
            headers: [("Cookie", "tb_flow=\(thirdState).\(SecureRandom.token())")])
        #expect(forged?.status == 400)

        // 4. The victim's own flow cookie and the attacker's code, with the state left out of the URL.
        let fourth = try #require(await attacker.authorize("provider=weibo"))
        let fourthCallback = try #require(await attacker.visitProvider(fourth.header("Location")!))
        let code = try #require(URLComponents(string: fourthCallback)?.queryItems?.first { $0.name == "code" }?.value)
        let stateless = await TestHTTP.send(
            port: s.broker.port, target: "/callback?code=" + Self.encoded(code),
            headers: [("Cookie", "tb_flow=" + victimCookie)])
        #expect(stateless?.status == 400)

        #expect(s.a.tokenCalls == 0)
        #expect(await Self.accounts(s) == "{\"accounts\":[],\"next_cursor\":null}")
    }

    // MARK: Session cookie tampering

    @Test func aTamperedSessionCookieIs401() async throws {
        let s = try Self.setUp()
        let first = s.browserA
        #expect(await first.connect(provider: "weibo")?.status == 200)
        s.a.set { $0.users = .fixed("2000000002") }
        let second = s.browserA
        #expect(await second.connect(provider: "weibo")?.status == 200)
        let cookie1 = try #require(first.jar.cookies["tb_session"])
        let cookie2 = try #require(second.jar.cookies["tb_session"])
        let (payload1, mac1) = try Self.split(cookie1)
        let (payload2, mac2) = try Self.split(cookie2)

        func read(_ id: String, with cookie: String, method: String = "GET") async -> Int? {
            await TestHTTP.send(
                port: s.broker.port, method: method, target: "/account?id=" + id,
                headers: [("Cookie", "tb_session=" + cookie)])?.status
        }
        #expect(await read("weibo:3733034601", with: cookie1) == 200)
        #expect(await read("weibo:2000000002", with: cookie2) == 200)
        #expect(await read("weibo:2000000002", with: cookie1) == 401)

        // The payload lists account ids in the clear: rewrite it to name the other browser's account.
        let stolenPayload = Base64URL.encode(
            Array(
                String(decoding: Base64URL.decode(payload1)!, as: UTF8.self)
                    .replacingOccurrences(of: "3733034601", with: "2000000002").utf8))
        let forgedWithOtherSecret = SessionCookie(accountIDs: ["weibo:2000000002"], issuedAt: 1)
            .encode(secret: Array("not-the-broker-secret-not-the-broker-secret".utf8))
        let tampered = [
            Self.flip(payload1, at: 2) + "." + mac1,  // a byte of the payload
            payload1 + "." + Self.flip(mac1, at: 5),  // a byte of the MAC
            payload1 + "." + String(mac1.dropLast(4)),  // truncated MAC
            payload1 + ".",  // no MAC
            payload1,  // no separator
            String(cookie1.dropLast(cookie1.count / 2)),  // cut in half
            payload2 + "." + mac1,  // payload of one cookie, MAC of the other
            payload1 + "." + mac2,
            stolenPayload + "." + mac1,
            forgedWithOtherSecret,
        ]
        for value in tampered {
            #expect(await read("weibo:2000000002", with: value) == 401, "cookie \(value)")
            #expect(await read("weibo:3733034601", with: value) == 401, "cookie \(value)")
        }
        #expect(await read("weibo:2000000002", with: stolenPayload + "." + mac1, method: "DELETE") == 401)
        #expect(
            await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: Self.api)?.body
                .components(separatedBy: "\"id\":").count == 3)
    }

    static func split(_ cookie: String) throws -> (String, String) {
        let parts = cookie.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 2)
        return (parts[0], parts[1])
    }

    /// Replaces the base64url character at `index` with another one, changing a decoded byte.
    static func flip(_ text: String, at index: Int) -> String {
        var characters = Array(text)
        characters[index] = characters[index] == "A" ? "B" : "A"
        return String(characters)
    }
}
