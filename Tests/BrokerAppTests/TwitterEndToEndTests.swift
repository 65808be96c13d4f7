import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// End to end over real sockets: browser → broker → fake Twitter (checking every signature) → broker → `/account`.
@Suite(.scoped) struct TwitterEndToEndTests {
    static let consumerSecret = "TW-CONSUMER-SECRET-SENTINEL-kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3"
    static let accountID = "twitter:" + FakeTwitterProvider.userID
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    struct Setup {
        let twitter: FakeTwitterProvider
        let broker: BrokerHarness
        var browser: Browser { Browser(brokerPort: broker.port, providerPort: twitter.port) }
    }

    /// A fake Twitter and a broker whose environment holds the consumer key and `brokerSecret`.
    static func setUp(
        brokerSecret: String = consumerSecret, authenticate: Bool = false, dataDirectory: String? = nil,
        twitter existing: FakeTwitterProvider? = nil
    ) throws -> Setup {
        let twitter = try existing ?? FakeTwitterProvider.scoped(consumerSecret: consumerSecret)
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(twitter.providerEntry(authenticate: authenticate))}}",
            environment: [
                "TWITTER_CONSUMER_KEY": FakeTwitterProvider.consumerKey,
                "TWITTER_CONSUMER_SECRET": brokerSecret,
            ],
            dataDirectory: dataDirectory)
        return Setup(twitter: twitter, broker: broker)
    }

    /// The value of the JSON string field `name` in `body`.
    static func field(_ body: String, _ name: String) -> String? {
        guard let range = body.range(of: "\"\(name)\":\"") else { return nil }
        return String(body[range.upperBound...].prefix { $0 != "\"" })
    }

    @Test func happyPathStoresTokenAndSecretAndHandsThemToTheBrowserThatConnected() async throws {
        let s = try Self.setUp()
        let browser = s.browser
        let start = try #require(await browser.authorize("provider=twitter"))
        #expect(start.status == 302)
        let location = try #require(start.header("Location").flatMap(URLComponents.init(string:)))
        #expect(location.path == "/oauth/authorize")
        #expect(location.queryItems?.map(\.name) == ["oauth_token"])
        #expect(s.twitter.state.callbacks == ["http://localhost:8080/callback"])
        #expect(browser.jar.cookies["tb_flow"] != nil)

        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        #expect(callback.hasPrefix("/callback?oauth_token="))
        #expect(!callback.contains("state="))
        let done = try #require(await browser.get(callback))
        #expect(done.status == 200)
        #expect(done.body.contains("\"id\":\"\(Self.accountID)\""))
        #expect(done.body.contains("\"screen_name\":\"TwitterAPI\""))
        #expect(!done.body.contains("SENTINEL"))
        #expect(browser.jar.cookies["tb_flow"] == nil)

        let mine = try #require(await browser.get("/account?id=\(Self.accountID)"))
        #expect(mine.status == 200)
        #expect(Self.field(mine.body, "access_token")?.hasPrefix("\(FakeTwitterProvider.userID)-TW-ACCESS-SENTINEL-") == true)
        #expect(Self.field(mine.body, "token_secret")?.hasPrefix("TW-ACCESS-SECRET-SENTINEL-") == true)
        #expect(mine.body.contains("\"expires_at\":null"))
        #expect(mine.body.contains("\"screen_name\":\"TwitterAPI\""))
        #expect(mine.header("Cache-Control") == "no-store")
        let byKey = try #require(
            await TestHTTP.send(
                port: s.broker.port, target: "/account?provider=twitter&uid=\(FakeTwitterProvider.userID)", headers: Self.api))
        #expect(byKey.status == 200)
        #expect(Self.field(byKey.body, "token_secret") == Self.field(mine.body, "token_secret"))
        let stranger = Browser(brokerPort: s.broker.port, providerPort: s.twitter.port)
        #expect(await stranger.get("/account?id=\(Self.accountID)")?.status == 401)

        #expect(s.twitter.state.requestTokenCalls == 1)
        #expect(s.twitter.state.accessTokenCalls == 1)
        #expect(s.twitter.state.verifyCalls == 1)
        #expect(s.twitter.state.signatureFailures == 0)
    }

    @Test func aBackEndDrivenFlowCompletesWithoutAFlowCookie() async throws {
        let s = try Self.setUp()
        let started = try #require(
            await TestHTTP.send(
                port: s.broker.port, method: "POST", target: "/authorize",
                headers: Self.api + [("Content-Type", "application/x-www-form-urlencoded")],
                body: "provider=twitter"))
        #expect(started.status == 200)
        let authorizeURL = try #require(Self.field(started.body, "authorize_url"))
        let state = try #require(Self.field(started.body, "state"))
        #expect(s.twitter.state.callbacks == ["http://localhost:8080/callback?state=\(state)"])
        let callback = try #require(await s.browser.visitProvider(authorizeURL))
        #expect(callback.hasPrefix("/callback?state=\(state)&oauth_token="))
        let done = await TestHTTP.send(port: s.broker.port, target: callback)
        #expect(done?.status == 200)
        #expect(done?.body.contains("\"id\":\"\(Self.accountID)\"") == true)
    }

    @Test func aWrongSignatureFailsTheFlow() async throws {
        let s = try Self.setUp(brokerSecret: "not-the-consumer-secret")
        let reply = try #require(await s.browser.authorize("provider=twitter"))
        #expect(reply.status == 502)
        #expect(reply.body.contains("\"error\":\"upstream_error\""))
        #expect(reply.body.contains("request token"))
        #expect(reply.body.contains("error code 32"))
        #expect(reply.header("Location") == nil)
        #expect(s.twitter.state.signatureFailures == 1)
        let list = await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: Self.api)
        #expect(list?.body == "{\"accounts\":[],\"next_cursor\":null}")
    }

    @Test func signInWithTwitterUsesAuthenticate() async throws {
        let s = try Self.setUp(authenticate: true)
        #expect(await s.browser.connect(provider: "twitter")?.status == 200)
        #expect(s.twitter.state.authorizePaths == ["/oauth/authenticate"])
    }

    @Test func denialIs403AndNoAccessTokenCall() async throws {
        let s = try Self.setUp()
        s.twitter.set { $0.deny = true }
        let reply = try #require(await s.browser.connect(provider: "twitter"))
        #expect(reply.status == 403)
        #expect(reply.body.contains("\"error\":\"access_denied\""))
        #expect(s.twitter.state.accessTokenCalls == 0)
    }

    @Test func aTokenIssuedToAnotherBrowserIsRefusedWithoutAnExchange() async throws {
        let s = try Self.setUp()
        let victim = s.browser
        let attacker = Browser(brokerPort: s.broker.port, providerPort: s.twitter.port)
        _ = try #require(await victim.authorize("provider=twitter"))
        let attackerStart = try #require(await attacker.authorize("provider=twitter"))
        let attackerCallback = try #require(await attacker.visitProvider(attackerStart.header("Location")!))
        // The attacker's approved token and verifier, presented by the victim's browser (session fixation).
        let fixed = try #require(await victim.get(attackerCallback))
        #expect(fixed.status == 400)
        #expect(fixed.body.contains("\"error\":\"invalid_state\""))
        #expect(s.twitter.state.accessTokenCalls == 0)
        // Without any flow cookie the callback cannot even be matched to a flow.
        let bare = await TestHTTP.send(port: s.broker.port, target: attackerCallback)
        #expect(bare?.status == 400)
        #expect(s.twitter.state.accessTokenCalls == 0)
        #expect(await attacker.get(attackerCallback)?.status == 200)
        #expect(s.twitter.state.accessTokenCalls == 1)
    }

    @Test func aReplayedCallbackIsRefused() async throws {
        let s = try Self.setUp()
        let browser = s.browser
        let start = try #require(await browser.authorize("provider=twitter"))
        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        let cookies = browser.jar.header
        #expect(await browser.get(callback)?.status == 200)
        let replay = await TestHTTP.send(port: s.broker.port, target: callback, headers: cookies)
        #expect(replay?.status == 400)
        #expect(replay?.body.contains("\"error\":\"invalid_state\"") == true)
        #expect(s.twitter.state.accessTokenCalls == 1)
    }

    @Test(arguments: [
        (FakeTwitterProvider.Mode.callbackNotConfirmed, "oauth_callback_confirmed is not true", "request token"),
        (.requestTokenUnauthorized, "error code 32", "request token"),
        (.callbackNotApproved, "error code 415", "request token"),
        (.verifierRejected, "HTTP 401", "access token"),
    ])
    func twitterErrorsAre502NamingTheStepAndNothingIsStored(mode: FakeTwitterProvider.Mode, reason: String, step: String) async throws {
        let s = try Self.setUp()
        s.twitter.set { $0.mode = mode }
        let browser = s.browser
        let start = try #require(await browser.authorize("provider=twitter"))
        let reply: TestHTTP.Reply
        if start.status == 302 {
            let callback = try #require(await browser.visitProvider(start.header("Location")!))
            reply = try #require(await browser.get(callback))
        } else {
            reply = start
        }
        #expect(reply.status == 502)
        #expect(reply.body.contains("\"error\":\"upstream_error\""))
        #expect(reply.body.contains(reason))
        #expect(reply.body.contains(step))
        for echoed in ["Invalid oauth_verifier", "Callback URL", "Could not authenticate", "SENTINEL"] {
            #expect(!reply.body.contains(echoed))
        }
        let list = await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: Self.api)
        #expect(list?.body == "{\"accounts\":[],\"next_cursor\":null}")
    }

    @Test func aProfileRefusedByTheAPITierStillConnectsTheAccount() async throws {
        let s = try Self.setUp()
        s.twitter.set { $0.mode = .verifyForbidden }
        let reply = try #require(await s.browser.connect(provider: "twitter"))
        #expect(reply.status == 200)
        #expect(reply.body.contains("\"screen_name\":\"twitterapi\""))
        #expect(s.twitter.state.verifyCalls == 1)
    }

    @Test func formLabelledAsFormIsReadToo() async throws {
        let s = try Self.setUp()
        s.twitter.set { $0.contentType = "application/x-www-form-urlencoded" }
        #expect(await s.browser.connect(provider: "twitter")?.status == 200)
    }

    @Test func accountsSurviveARestartAndDeleteRemovesThem() async throws {
        let s = try Self.setUp()
        #expect(await s.browser.connect(provider: "twitter")?.status == 200)
        let before = try #require(await TestHTTP.send(port: s.broker.port, target: "/account?id=\(Self.accountID)", headers: Self.api))
        await s.broker.stop()
        let again = try Self.setUp(dataDirectory: s.broker.dataDirectory, twitter: s.twitter)
        let after = try #require(await TestHTTP.send(port: again.broker.port, target: "/account?id=\(Self.accountID)", headers: Self.api))
        #expect(after.status == 200)
        #expect(Self.field(after.body, "access_token") == Self.field(before.body, "access_token"))
        #expect(Self.field(after.body, "token_secret") == Self.field(before.body, "token_secret"))
        #expect(Self.field(after.body, "token_secret") != nil)
        let deleted = await TestHTTP.send(
            port: again.broker.port, method: "DELETE", target: "/account?id=\(Self.accountID)", headers: Self.api)
        #expect(deleted?.status == 204)
        #expect(await TestHTTP.send(port: again.broker.port, target: "/account?id=\(Self.accountID)", headers: Self.api)?.status == 404)
    }

    @Test func providersListsTwitterAsConfiguredOAuth1() async throws {
        let s = try Self.setUp()
        let reply = try #require(await TestHTTP.send(port: s.broker.port, target: "/providers"))
        #expect(
            reply.body.contains(
                "{\"name\":\"twitter\",\"display_name\":\"Twitter\",\"icon_url\":null,\"kind\":\"oauth1\",\"configured\":true,\"missing\":[],\"grants\":[\"authorization_code\"],\"available\":true,\"reason\":null}"
            ))
        await s.broker.stop()
        let bare = try BrokerHarness(providersJSON: "{\"providers\": {}}")
        let unconfigured = try #require(await TestHTTP.send(port: bare.port, target: "/providers"))
        #expect(
            unconfigured.body.contains(
                "{\"name\":\"twitter\",\"display_name\":\"Twitter\",\"icon_url\":null,\"kind\":\"oauth1\",\"configured\":false,\"missing\":[\"TWITTER_CONSUMER_KEY\",\"TWITTER_CONSUMER_SECRET\"],\"grants\":[\"authorization_code\"],\"available\":false,\"reason\":null}"
            ))
    }

    @Test func noSecretReachesTheLogsAfterEveryFlow() async throws {
        let s = try Self.setUp()
        #expect(await s.browser.connect(provider: "twitter")?.status == 200)
        s.twitter.set { $0.mode = .verifierRejected }
        #expect(await s.browser.connect(provider: "twitter")?.status == 502)
        s.twitter.set {
            $0.mode = .ok; $0.deny = true
        }
        #expect(await s.browser.connect(provider: "twitter")?.status == 403)
        _ = await TestHTTP.send(port: s.broker.port, target: "/account?id=\(Self.accountID)", headers: Self.api)
        _ = await TestHTTP.send(port: s.broker.port, method: "DELETE", target: "/account?id=\(Self.accountID)", headers: Self.api)
        let log = s.broker.log
        #expect(log.contains("callback ok"))
        #expect(log.contains("callback failed"))
        for secret in ["SENTINEL", "TWREQ", "oauth_verifier=", "oauth_token=", BrokerHarness.apiKey] {
            #expect(!log.contains(secret), "log contains \(secret)")
        }
    }
}
