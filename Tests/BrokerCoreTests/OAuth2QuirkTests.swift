import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Testing

/// The OAuth 2.0 quirks as the client and the refresh path act on them: layouts, request shapes, endpoint variables, rotation.
struct OAuth2QuirkTests {
    static let redirectURI = "https://broker.example/callback"
    static let environment = [
        "SLACK_CLIENT_ID": "2141029472.691202649728", "SLACK_CLIENT_SECRET": "slack-secret-SENTINEL",
        "STRAVA_CLIENT_ID": "5", "STRAVA_CLIENT_SECRET": "strava-secret-SENTINEL",
        "NOTION_CLIENT_ID": "notion-id", "NOTION_CLIENT_SECRET": "notion-secret-SENTINEL",
        "TWITCH_CLIENT_ID": "twitch-id", "TWITCH_CLIENT_SECRET": "twitch-secret-SENTINEL",
        "HUBSPOT_CLIENT_ID": "hub-id", "HUBSPOT_CLIENT_SECRET": "hub-secret-SENTINEL",
        "LINEAR_CLIENT_ID": "lin-id", "LINEAR_CLIENT_SECRET": "lin-secret-SENTINEL",
        "REDDIT_CLIENT_ID": "red-id", "REDDIT_CLIENT_SECRET": "red-secret-SENTINEL",
    ]

    private func client(_ name: String, upstream: FakeUpstream = FakeUpstream(), environment: [String: String] = [:]) throws -> OAuth2Client
    {
        let registry = try ProviderRegistry.load(environment: Self.environment.merging(environment) { $1 }, providersFile: nil)
        let provider = try #require(registry.provider(named: name))
        return OAuth2Client(settings: try OAuth2Settings(provider), redirectURI: Self.redirectURI, upstream: upstream)
    }

    private func loadError(_ environment: [String: String]) -> ProviderConfigurationError? {
        do {
            _ = try ProviderRegistry.load(environment: environment, providersFile: nil)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Endpoint variables

    @Test func theTenantTheGitLabInstanceAndTheSalesforceHostFillThePresetsURLs() throws {
        #expect(
            try client("microsoft", environment: ["MICROSOFT_CLIENT_ID": "m", "MICROSOFT_CLIENT_SECRET": "s"]).settings.tokenURL
                == "https://login.microsoftonline.com/common/oauth2/v2.0/token")
        let tenant = try client(
            "microsoft",
            environment: [
                "MICROSOFT_CLIENT_ID": "m", "MICROSOFT_CLIENT_SECRET": "s",
                "MICROSOFT_TENANT": "contoso.onmicrosoft.com",
            ])
        #expect(tenant.settings.authorizeURL == "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize")
        let gitlab = try client(
            "gitlab", environment: ["GITLAB_CLIENT_ID": "g", "GITLAB_CLIENT_SECRET": "s", "GITLAB_URL": "https://git.example.com/gl//"])
        #expect(gitlab.settings.tokenURL == "https://git.example.com/gl/oauth/token")
        #expect(gitlab.settings.userURL == "https://git.example.com/gl/api/v4/user")
        #expect(gitlab.settings.revocation?.url == "https://git.example.com/gl/oauth/revoke")
        let salesforce = try client(
            "salesforce",
            environment: [
                "SALESFORCE_CLIENT_ID": "c", "SALESFORCE_CLIENT_SECRET": "s",
                "SALESFORCE_LOGIN_HOST": "test.salesforce.com",
            ])
        #expect(salesforce.settings.userURL == "https://test.salesforce.com/services/oauth2/userinfo")
        #expect(ProviderPresets.environmentVariables.contains("MICROSOFT_TENANT"))
    }

    @Test(arguments: [
        ("MICROSOFT_TENANT", "common/../evil"), ("MICROSOFT_TENANT", "a?b"), ("MICROSOFT_TENANT", ".."),
        ("GITLAB_URL", "gitlab.corp.test"), ("GITLAB_URL", "https://gitlab.example.com/?x=1"), ("GITLAB_URL", "ftp://gitlab.example.com"),
        ("GITLAB_URL", "https://user@gitlab.example.com"), ("SALESFORCE_LOGIN_HOST", "evil.example/x"),
        ("SALESFORCE_LOGIN_HOST", "https://login.salesforce.com"), ("SALESFORCE_LOGIN_HOST", "a..b"),
    ])
    func anEndpointVariableThatCouldBendAURLStopsStartUpNamingIt(variable: String, value: String) throws {
        let error = try #require(loadError([variable: value]))
        #expect(error.variable == variable)
        #expect(!error.description.contains(value) || value.count < 3)
    }

    // MARK: Token answers

    @Test func slacksUserTokenIsReadUnderAuthedUserAndABotOnlyAnswerAtTheTop() async throws {
        let upstream = FakeUpstream()
        let slack = try client("slack", upstream: upstream)
        await upstream.on(
            "https://slack.com/api/oauth.v2.access",
            respond: ProviderWire.response(
                200, "application/json",
                #"""
                {"ok":true,"access_token":"xoxb-bot","token_type":"bot","scope":"commands","authed_user":{"id":"U1234",
                 "scope":"users:read","access_token":"xoxp-user","token_type":"user"},"team":{"id":"T9TK3CUKW","name":"Softball"}}
                """#))
        let grant = try await slack.exchange(code: "c0de", codeVerifier: nil)
        #expect(grant.accessToken.value == "xoxp-user" && grant.tokenType == "user" && grant.scope == "users:read")
        #expect(grant.uid == "T9TK3CUKW:U1234")
        let request = try #require(await upstream.requests.first)
        #expect(request.header("Authorization")?.hasPrefix("Basic ") == true && request.form["client_secret"] == nil)

        await upstream.on(
            "https://slack.com/api/oauth.v2.access",
            respond: ProviderWire.response(
                200, "application/json",
                #"{"ok":true,"access_token":"xoxb-bot","token_type":"bot","authed_user":{"id":"U1234"},"team":{"id":"T9TK3CUKW"}}"#))
        #expect(try await slack.exchange(code: "c0de", codeVerifier: nil).accessToken.value == "xoxb-bot")

        await upstream.on(
            "https://slack.com/api/oauth.v2.access",
            respond: ProviderWire.response(
                200, "application/json",
                #"{"ok":false,"error":"invalid_code"}"#))
        let refused = await brokerError { try await slack.exchange(code: "c0de", codeVerifier: nil) }
        #expect(refused == .upstreamError(step: "token_exchange", reason: "HTTP 200 with error invalid_code"))
    }

    @Test func stravasAthleteIDMustBeAnIntegerAsWritten() throws {
        let layout = TokenAnswerLayout(userIDFields: ["athlete.id"], userNameField: "athlete.username")
        func grant(_ athlete: String) throws -> TokenGrant {
            try OAuth2ResponseValidator.tokenGrant(
                from: ProviderWire.response(
                    200, "application/json",
                    #"{"access_token":"a","token_type":"Bearer","expires_in":21600,"athlete":\#(athlete)}"#), step: "s", layout: layout)
        }
        #expect(try grant(#"{"id":134815,"username":"marianne_t"}"#).uid == "134815")
        #expect(try grant(#"{"id":134815,"username":"marianne_t"}"#).screenName == "marianne_t")
        #expect(try grant(#"{"id":134815.0}"#).uid == nil)
        #expect(try grant(#"{"id":1.34815e5}"#).uid == nil)
        #expect(try grant(#"{"id":true}"#).uid == nil)
        // The default layout still reads Weibo's uid and nothing of an athlete.
        let plain = try OAuth2ResponseValidator.tokenGrant(
            from: ProviderWire.response(
                200, "application/json",
                #"{"access_token":"a","uid":"3733034601","athlete":{"id":1}}"#), step: "s")
        #expect(plain.uid == "3733034601")
    }

    // MARK: Requests

    @Test func notionsTokenRequestIsJSONWithHTTPBasicAndItsVersionHeader() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            "https://api.notion.com/v1/oauth/token",
            respond: ProviderWire.response(
                200, "application/json",
                #"{"access_token":"secret_abc","token_type":"bearer","bot_id":"b","workspace_id":"w","owner":{"type":"user","user":{"id":"u","name":"Ada"}}}"#
            ))
        let grant = try await client("notion", upstream: upstream).exchange(code: "c0de", codeVerifier: nil)
        #expect(grant.uid == "w:u" && grant.screenName == "Ada")
        let request = try #require(await upstream.requests.first)
        #expect(request.header("Content-Type") == "application/json")
        #expect(request.header("Notion-Version") == "2025-09-03")
        #expect(request.header("Authorization")?.hasPrefix("Basic ") == true)
        #expect(
            String(decoding: request.body, as: UTF8.self)
                == #"{"code":"c0de","grant_type":"authorization_code","redirect_uri":"https://broker.example/callback"}"#)
    }

    @Test func theUserEndpointIsAskedAsEachProviderWants() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            "https://id.twitch.tv/oauth2/validate",
            respond: ProviderWire.response(
                200, "application/json",
                #"{"client_id":"twitch-id","login":"twitchdev","user_id":"141981764"}"#))
        await upstream.on(
            "https://api.hubapi.com/oauth/v3/token/introspect",
            respond: ProviderWire.response(
                200, "application/json",
                #"{"active":true,"hub_id":62515,"user_id":123456,"user":"test@hubspot.com"}"#))
        await upstream.on(
            "https://api.linear.app/graphql",
            respond: ProviderWire.response(
                200, "application/json",
                #"{"data":{"viewer":{"id":"lin-1","name":"Jane"}}}"#))
        let twitch = try await client("twitch", upstream: upstream).fetchUser(accessToken: Secret("tw-token"))
        #expect(twitch.uid == "141981764" && twitch.screenName == "twitchdev")
        let hubspot = try await client("hubspot", upstream: upstream).fetchUser(accessToken: Secret("hs-token"))
        #expect(hubspot.uid == "62515:123456" && hubspot.screenName == "test@hubspot.com")
        let linear = try await client("linear", upstream: upstream).fetchUser(accessToken: Secret("lin-token"))
        #expect(linear.uid == "lin-1" && linear.screenName == "Jane")
        let requests = await upstream.requests
        #expect(requests[0].method == "GET" && requests[0].header("Authorization") == "OAuth tw-token")
        #expect(requests[1].method == "POST" && requests[1].header("Authorization") == nil)
        #expect(
            requests[1].form == [
                "token": "hs-token", "token_type_hint": "access_token", "client_id": "hub-id",
                "client_secret": "hub-secret-SENTINEL",
            ])
        #expect(requests[2].method == "POST" && requests[2].header("Authorization") == "Bearer lin-token")
        #expect(String(decoding: requests[2].body, as: UTF8.self) == #"{"query":"{ viewer { id name } }"}"#)
    }

    @Test func revocationNamesTheTokenAndTheClientAsEachProviderWants() async throws {
        let upstream = FakeUpstream()
        for url in [
            "https://id.twitch.tv/oauth2/revoke", "https://api.notion.com/v1/oauth/revoke", "https://slack.com/api/auth.revoke",
            "https://www.strava.com/oauth/deauthorize", "https://www.reddit.com/api/v1/revoke_token",
        ] {
            await upstream.on(url, respond: ProviderWire.response(200, "application/json", #"{"ok":true}"#))
        }
        var account = Account.make(provider: "x", accessToken: "access-1")
        account.refreshToken = Secret("refresh-1")
        for name in ["twitch", "notion", "slack", "reddit"] {
            try await client(name, upstream: upstream).revoke(account: account)
        }
        try await client("strava", upstream: upstream).revoke(account: account)
        let requests = await upstream.requests
        #expect(requests[0].form == ["token": "access-1", "token_type_hint": "access_token", "client_id": "twitch-id"])
        #expect(requests[0].header("Authorization") == nil)
        #expect(String(decoding: requests[1].body, as: UTF8.self) == #"{"token":"access-1"}"#)
        #expect(requests[1].header("Authorization")?.hasPrefix("Basic ") == true && requests[1].header("Notion-Version") == "2025-09-03")
        #expect(requests[2].body.isEmpty && requests[2].header("Authorization") == "Bearer access-1")
        #expect(requests[3].form == ["token": "refresh-1", "token_type_hint": "refresh_token"])
        #expect(requests[3].header("User-Agent") == "web:token-broker:1.0 (OAuth token broker)")
        #expect(requests[4].form == ["access_token": "access-1"])
    }

    @Test func slackAndNotionNameADeadRefreshTokenInTheirOwnShapes() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            "https://slack.com/api/oauth.v2.access",
            respond: ProviderWire.response(
                200, "application/json",
                #"{"ok":false,"error":"invalid_refresh_token"}"#))
        await upstream.on(
            "https://api.notion.com/v1/oauth/token",
            respond: ProviderWire.response(
                400, "application/json",
                #"{"object":"error","status":400,"code":"invalid_grant","message":"Invalid refresh token."}"#))
        for name in ["slack", "notion"] {
            let subject = try client(name, upstream: upstream)
            #expect(await brokerError { try await subject.refresh(refreshToken: Secret("r")) } == .reauthorizationRequired, "\(name)")
        }
    }

    // MARK: Rotation

    @Test func aRotatingProvidersRefreshWithoutASuccessorLeavesNoSpentTokenBehind() async throws {
        let file = """
            {"providers": {
              "rotating": {"kind": "oauth2", "client_id": "r", "client_secret": "s", "authorize_url": "https://r.example/a",
                           "token_url": "https://r.example/token", "user_url": "https://r.example/me", "refresh_token_rotates": true},
              "keeping": {"kind": "oauth2", "client_id": "k", "client_secret": "s", "authorize_url": "https://k.example/a",
                          "token_url": "https://k.example/token", "user_url": "https://k.example/me"}}}
            """
        try await TemporaryDirectory.with { directory in
            let registry = try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8))
            let f = RefreshFixture(
                accounts: try JSONFileAccountRepository(directory: directory), upstream: FakeUpstream(),
                clock: TestClock(), registry: registry, events: EventLog())
            for host in ["r", "k"] {
                await f.upstream.on(
                    "https://\(host).example/token",
                    respond: ProviderWire.response(
                        200, "application/json",
                        #"{"access_token":"new-\#(host)","token_type":"bearer","expires_in":3600}"#))
            }
            let rotating = try await f.seed(provider: "rotating", uid: "1", lifetime: 60, refreshToken: "spent-SENTINEL")
            let keeping = try await f.seed(provider: "keeping", uid: "1", lifetime: 60, refreshToken: "kept-SENTINEL")
            let service = f.service()
            #expect(try await service.account(id: rotating.accountID).accessToken.value == "new-r")
            #expect(try await service.account(id: keeping.accountID).accessToken.value == "new-k")
            #expect(try await f.stored(rotating.accountID)?.refreshToken == nil)
            #expect(try await f.stored(keeping.accountID)?.refreshToken?.value == "kept-SENTINEL")
        }
    }
}
