import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// End to end over real sockets: browser → broker → fake TMDB approval page → broker → session → `/account`.
@Suite(.scoped) struct TMDBEndToEndTests {
    static let apiKey = "TMDBKEYSENTINEL0123456789abcdef0"
    static let readAccessToken = "eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJUTURCLVNFTlRJTkVMIn0.U0VOVElORUwtc2lnbmF0dXJl"
    static let accountID = "tmdb:\(FakeTMDBProvider.accountID)"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    struct Setup {
        let tmdb: FakeTMDBProvider
        let broker: BrokerHarness
        var browser: Browser { Browser(brokerPort: broker.port, providerPort: tmdb.port) }
    }

    /// A fake TMDB expecting `key`, and a broker whose `TMDB_API_KEY` is `brokerKey`.
    static func setUp(
        key: String = apiKey, brokerKey: String? = nil, dataDirectory: String? = nil,
        tmdb existing: FakeTMDBProvider? = nil
    ) throws -> Setup {
        let tmdb = try existing ?? FakeTMDBProvider.scoped(apiKey: key)
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(tmdb.providerEntry)}}",
            environment: ["TMDB_API_KEY": brokerKey ?? key], dataDirectory: dataDirectory)
        return Setup(tmdb: tmdb, broker: broker)
    }

    /// The value of the JSON string field `name` in `body`.
    static func field(_ body: String, _ name: String) -> String? {
        guard let range = body.range(of: "\"\(name)\":\"") else { return nil }
        return String(body[range.upperBound...].prefix { $0 != "\"" })
    }

    /// `target` with the query item `name` set to `value`.
    static func replacing(_ name: String, with value: String, in target: String) -> String {
        var components = URLComponents(string: target)!
        components.queryItems = components.queryItems?.map { $0.name == name ? URLQueryItem(name: name, value: value) : $0 }
        return components.string!
    }

    @Test func happyPathStoresTheSessionAsTheTokenForTheBrowserThatConnected() async throws {
        let s = try Self.setUp()
        let browser = s.browser
        let start = try #require(await browser.authorize("provider=tmdb"))
        #expect(start.status == 302)
        let location = try #require(start.header("Location").flatMap(URLComponents.init(string:)))
        #expect(location.path.hasPrefix("/authenticate/"))
        let redirect = try #require(location.queryItems?.first { $0.name == "redirect_to" }?.value)
        #expect(redirect.hasPrefix("http://localhost:8080/callback?state="))
        #expect(!(start.header("Location") ?? "").contains(Self.apiKey))

        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        let items = try #require(URLComponents(string: callback)?.queryItems).map(\.name)
        #expect(items == ["state", "request_token", "approved"])
        let done = try #require(await browser.get(callback))
        #expect(done.status == 200)
        #expect(done.body.contains("\"id\":\"\(Self.accountID)\""))
        #expect(done.body.contains("\"screen_name\":\"travisbell\""))
        #expect(!done.body.contains("SENTINEL"))

        let mine = try #require(await browser.get("/account?id=\(Self.accountID)"))
        #expect(mine.status == 200)
        #expect(Self.field(mine.body, "access_token")?.hasPrefix("TMDB-SESSION-SENTINEL-") == true)
        #expect(mine.body.contains("\"expires_at\":null"))
        #expect(!mine.body.contains("token_secret"))
        #expect(await Browser(brokerPort: s.broker.port, providerPort: s.tmdb.port).get("/account?id=\(Self.accountID)")?.status == 401)
        #expect(s.tmdb.state.tokenCalls == 1)
        #expect(s.tmdb.state.sessionMethods == ["POST"])
        #expect(s.tmdb.state.apiKeyCalls == 3)
        #expect(s.tmdb.state.bearerCalls == 0)
    }

    @Test func aCallbackWhoseQueryWasAppendedWithASecondQuestionMarkStillCompletes() async throws {
        let s = try Self.setUp()
        s.tmdb.set { $0.appendsBlindly = true }
        let browser = s.browser
        let start = try #require(await browser.authorize("provider=tmdb"))
        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        #expect(callback.components(separatedBy: "?").count == 3)
        let done = try #require(await browser.get(callback))
        #expect(done.status == 200)
        #expect(done.body.contains("\"id\":\"\(Self.accountID)\""))
    }

    @Test func aReadAccessTokenIsSentAsBearer() async throws {
        let s = try Self.setUp(key: Self.readAccessToken)
        #expect(await s.browser.connect(provider: "tmdb")?.status == 200)
        #expect(s.tmdb.state.bearerCalls == 3)
        #expect(s.tmdb.state.apiKeyCalls == 0)
    }

    @Test(arguments: [FakeTMDBProvider.Approval.deny, .noAnswer, .approvedFalse])
    func anythingButApprovalIs403AndNoSessionCall(approval: FakeTMDBProvider.Approval) async throws {
        let s = try Self.setUp()
        s.tmdb.set { $0.approval = approval }
        let reply = try #require(await s.browser.connect(provider: "tmdb"))
        #expect(reply.status == 403)
        #expect(reply.body.contains("\"error\":\"access_denied\""))
        #expect(s.tmdb.state.sessionCalls == 0)
    }

    @Test func aRequestTokenIssuedToAnotherBrowserIsRefusedWithoutASessionCall() async throws {
        let s = try Self.setUp()
        let victim = s.browser
        let attacker = Browser(brokerPort: s.broker.port, providerPort: s.tmdb.port)
        let victimStart = try #require(await victim.authorize("provider=tmdb"))
        let attackerStart = try #require(await attacker.authorize("provider=tmdb"))
        let attackerCallback = try #require(await attacker.visitProvider(attackerStart.header("Location")!))
        let attackerToken = try #require(URLComponents(string: attackerCallback)?.queryItems?.first { $0.name == "request_token" }?.value)
        let victimCallback = try #require(await victim.visitProvider(victimStart.header("Location")!))
        // The victim's own state and cookie, but the attacker's approved request token.
        let fixed = try #require(await victim.get(Self.replacing("request_token", with: attackerToken, in: victimCallback)))
        #expect(fixed.status == 400)
        #expect(fixed.body.contains("\"error\":\"invalid_state\""))
        #expect(s.tmdb.state.sessionCalls == 0)
        // The attacker's own browser still completes its flow, once.
        #expect(await attacker.get(attackerCallback)?.status == 200)
        #expect(s.tmdb.state.sessionCalls == 1)
        // A browser without the flow cookie gets nowhere with a callback URL.
        let other = try #require(await Browser(brokerPort: s.broker.port, providerPort: s.tmdb.port).authorize("provider=tmdb"))
        let otherCallback = try #require(await attacker.visitProvider(other.header("Location")!))
        #expect(await TestHTTP.send(port: s.broker.port, target: otherCallback)?.status == 400)
        #expect(s.tmdb.state.sessionCalls == 1)
    }

    @Test func aReplayedCallbackIsRefused() async throws {
        let s = try Self.setUp()
        let browser = s.browser
        let start = try #require(await browser.authorize("provider=tmdb"))
        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        let cookies = browser.jar.header
        #expect(await browser.get(callback)?.status == 200)
        let replay = await TestHTTP.send(port: s.broker.port, target: callback, headers: cookies)
        #expect(replay?.status == 400)
        #expect(s.tmdb.state.sessionCalls == 1)
    }

    @Test func aWrongKeyIs502WithCode7() async throws {
        let s = try Self.setUp(brokerKey: "wrongkeywrongkeywrongkeywrongkey")
        let reply = try #require(await s.browser.authorize("provider=tmdb"))
        #expect(reply.status == 502)
        #expect(reply.body.contains("\"error\":\"upstream_error\""))
        #expect(reply.body.contains("TMDB status_code 7"))
        #expect(!reply.body.contains("Invalid API key"))
        #expect(!reply.body.contains("wrongkey"))
        #expect(s.tmdb.state.tokenCalls == 0)
    }

    @Test func anExpiredRequestTokenIs502WithCode33AndNothingIsStored() async throws {
        let s = try Self.setUp()
        s.tmdb.set { $0.expireTokens = true }
        let reply = try #require(await s.browser.connect(provider: "tmdb"))
        #expect(reply.status == 502)
        #expect(reply.body.contains("TMDB status_code 33"))
        #expect(reply.body.contains("session"))
        let list = await TestHTTP.send(port: s.broker.port, target: "/accounts", headers: Self.api)
        #expect(list?.body == "{\"accounts\":[],\"next_cursor\":null}")
    }

    @Test func accountsSurviveARestartAndDeleteLogsTheSessionOut() async throws {
        let s = try Self.setUp()
        #expect(await s.browser.connect(provider: "tmdb")?.status == 200)
        let before = try #require(await TestHTTP.send(port: s.broker.port, target: "/account?id=\(Self.accountID)", headers: Self.api))
        let session = try #require(Self.field(before.body, "access_token"))
        await s.broker.stop()
        let again = try Self.setUp(dataDirectory: s.broker.dataDirectory, tmdb: s.tmdb)
        let after = try #require(await TestHTTP.send(port: again.broker.port, target: "/account?id=\(Self.accountID)", headers: Self.api))
        #expect(Self.field(after.body, "access_token") == session)
        let deleted = await TestHTTP.send(
            port: again.broker.port, method: "DELETE", target: "/account?id=\(Self.accountID)", headers: Self.api)
        #expect(deleted?.status == 204)
        #expect(s.tmdb.state.deletedSessions == [session])
        #expect(await TestHTTP.send(port: again.broker.port, target: "/account?id=\(Self.accountID)", headers: Self.api)?.status == 404)
    }

    @Test func providersListsTMDBAsConfigured() async throws {
        let s = try Self.setUp()
        let reply = try #require(await TestHTTP.send(port: s.broker.port, target: "/providers"))
        #expect(
            reply.body.contains(
                "{\"name\":\"tmdb\",\"display_name\":\"TheMovieDB\",\"icon_url\":null,\"kind\":\"tmdb\",\"configured\":true,\"missing\":[],\"grants\":[\"authorization_code\"],\"available\":true,\"reason\":null}"
            ))
    }

    @Test func noSecretReachesTheLogsAfterEveryFlow() async throws {
        let s = try Self.setUp()
        #expect(await s.browser.connect(provider: "tmdb")?.status == 200)
        s.tmdb.set { $0.approval = .deny }
        #expect(await s.browser.connect(provider: "tmdb")?.status == 403)
        s.tmdb.set {
            $0.approval = .approve; $0.expireTokens = true
        }
        #expect(await s.browser.connect(provider: "tmdb")?.status == 502)
        _ = await TestHTTP.send(port: s.broker.port, target: "/account?id=\(Self.accountID)", headers: Self.api)
        _ = await TestHTTP.send(port: s.broker.port, method: "DELETE", target: "/account?id=\(Self.accountID)", headers: Self.api)
        let log = s.broker.log
        #expect(log.contains("callback ok"))
        #expect(log.contains("account deleted"))
        for secret in ["SENTINEL", "request_token=", "session_id", BrokerHarness.apiKey] {
            #expect(!log.contains(secret), "log contains \(secret)")
        }
    }
}
