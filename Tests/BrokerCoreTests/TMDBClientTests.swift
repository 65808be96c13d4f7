import BrokerCore
import Foundation
import Testing

/// The TMDB v3 session client against TMDB's documented answers and error bodies (providers.md §3).
struct TMDBClientTests {
    /// A v3 API key: 32 hex digits.
    static let apiKey = "0123456789abcdef0123456789SENTNL"
    /// A v4 API Read Access Token: a JWT.
    static let readAccessToken = "eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJTRU5USU5FTCJ9.c2lnbmF0dXJlLVNFTlRJTkVM"
    static let base = "https://api.themoviedb.org/3"

    /// The tmdb preset with `key`, and `overrides` applied.
    static func tmdb(key: String = apiKey, _ overrides: (inout ProviderConfiguration) -> Void = { _ in }) -> ProviderConfiguration {
        var provider = ProviderPresets.preset(named: "tmdb", environment: ["TMDB_API_KEY": key])!
        overrides(&provider)
        return provider
    }

    /// A JSON answer as TMDB sends it.
    static func json(_ body: String, status: Int = 200) -> UpstreamResponse {
        UpstreamResponse(status: status, headers: [("Content-Type", "application/json;charset=utf-8")], body: Array(body.utf8))
    }

    static let tokenNew = json(
        #"{"success":true,"expires_at":"2016-08-26 17:04:39 UTC","request_token":"ff5c7eeb5a8870efe3cd7fc5c282cffd26800ecd"}"#)

    @Test func requestTokenIsFetchedWithTheKeyAsAQueryParameter() async throws {
        let upstream = FakeUpstream()
        await upstream.on(Self.base + "/authentication/token/new", respond: Self.tokenNew)
        let token = try await TMDBClient(settings: try TMDBSettings(Self.tmdb()), upstream: upstream).createRequestToken()
        #expect(token == "ff5c7eeb5a8870efe3cd7fc5c282cffd26800ecd")
        let request = try #require(await upstream.requests.first)
        #expect(request.method == "GET")
        #expect(request.url == Self.base + "/authentication/token/new?api_key=" + Self.apiKey)
        #expect(request.header("Authorization") == nil)
    }

    @Test func aReadAccessTokenIsSentAsBearerAndNeverInTheURL() async throws {
        let upstream = FakeUpstream()
        await upstream.on(Self.base + "/authentication/token/new", respond: Self.tokenNew)
        let client = TMDBClient(settings: try TMDBSettings(Self.tmdb(key: Self.readAccessToken)), upstream: upstream)
        #expect(client.usesBearer)
        #expect(!TMDBClient(settings: try TMDBSettings(Self.tmdb()), upstream: upstream).usesBearer)
        _ = try await client.createRequestToken()
        let request = try #require(await upstream.requests.first)
        #expect(request.url == Self.base + "/authentication/token/new")
        #expect(request.header("Authorization") == "Bearer " + Self.readAccessToken)
    }

    @Test(arguments: [
        (#"{"success":false,"expires_at":"2016-08-26 17:04:39 UTC","request_token":"ff5c"}"#, "HTTP 200 with success false"),
        (#"{"expires_at":"2016-08-26 17:04:39 UTC","request_token":"ff5c"}"#, "success is not true"),
        (#"{"success":true,"expires_at":"2016-08-26 17:04:39 UTC"}"#, "the response has no usable request_token"),
        (
            #"{"success":true,"expires_at":"2016-08-26 17:04:39 UTC","request_token":"../../evil?x=1"}"#,
            "the response has no usable request_token"
        ),
        (#"{"success":true,"request_token":"ff5c"}"#, "the response has no expires_at"),
        (#"["success"]"#, "the body is not a JSON object"),
    ])
    func aRequestTokenAnswerIsCheckedField(body: String, reason: String) async throws {
        let upstream = FakeUpstream()
        await upstream.on(Self.base + "/authentication/token/new", respond: Self.json(body))
        let thrown = await brokerError {
            try await TMDBClient(settings: try TMDBSettings(Self.tmdb()), upstream: upstream).createRequestToken()
        }
        #expect(thrown == .upstreamError(step: "request_token", reason: reason))
    }

    @Test(arguments: [
        (
            TMDBClientTests.json(
                #"{"status_code":7,"status_message":"Invalid API key: You must be granted a valid key.","success":false}"#, status: 401),
            "HTTP 401 (not a 2xx status) with TMDB status_code 7"
        ),
        (
            TMDBClientTests.json(
                #"{"success":false,"status_code":33,"status_message":"Invalid request token: The request token is either expired or invalid."}"#,
                status: 401),
            "HTTP 401 (not a 2xx status) with TMDB status_code 33"
        ),
        (
            TMDBClientTests.json(#"{"failure":true,"status_code":17,"status_message":"Session denied."}"#, status: 401),
            "HTTP 401 (not a 2xx status) with TMDB status_code 17"
        ),
        (
            TMDBClientTests.json(#"{"failure":true,"status_code":17,"status_message":"Session denied."}"#),
            "HTTP 200 with success false (TMDB status_code 17)"
        ),
        (
            UpstreamResponse(status: 503, headers: [("Content-Type", "text/html")], body: Array("<html>Service Unavailable</html>".utf8)),
            "HTTP 503 (not a 2xx status)"
        ),
        (
            UpstreamResponse(status: 200, headers: [("Content-Type", "text/html")], body: Array("<html>maintenance</html>".utf8)),
            "the body is not JSON (text/html)"
        ),
        (TMDBClientTests.json(#"{"success":true}"#), "the response has no usable session_id"),
        // A C1 control character (U+0085) is a control character like C0 and DEL.
        (TMDBClientTests.json(#"{"success":true,"session_id":"7919\u0085c641"}"#), "the response has no usable session_id"),
    ])
    func sessionErrorsCarryTheTMDBCodeButNotItsMessage(response: UpstreamResponse, reason: String) async throws {
        let upstream = FakeUpstream()
        await upstream.on(Self.base + "/authentication/session/new", respond: response)
        let thrown = await brokerError {
            try await TMDBClient(settings: try TMDBSettings(Self.tmdb()), upstream: upstream).createSession(
                requestToken: "ff5c7eeb5a8870efe3cd7fc5c282cffd26800ecd")
        }
        #expect(thrown == .upstreamError(step: "session", reason: reason))
        for echoed in ["Invalid", "denied", "maintenance", "SENTNL"] {
            #expect(thrown?.message.contains(echoed) == false)
        }
    }

    @Test func sessionIsCreatedWithAJSONPost() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            Self.base + "/authentication/session/new",
            respond: Self.json(#"{"success":true,"session_id":"79191836ddaa0da3df76a5ffef6f07ad6ab0c641"}"#))
        let session = try await TMDBClient(settings: try TMDBSettings(Self.tmdb()), upstream: upstream).createSession(
            requestToken: "6bc047b88f669d1fb86574f06381005d93d3517a")
        #expect(session.value == "79191836ddaa0da3df76a5ffef6f07ad6ab0c641")
        let request = try #require(await upstream.requests.first)
        #expect(request.method == "POST")
        #expect(request.header("Content-Type")?.hasPrefix("application/json") == true)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: String])
        #expect(body == ["request_token": "6bc047b88f669d1fb86574f06381005d93d3517a"])
    }

    @Test func accountIsReadWithTheSessionAndTheNumericIDBecomesText() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            Self.base + "/account",
            respond: Self.json(
                #"{"avatar":{"gravatar":{"hash":"c9e9fc152ee756a900db85757c29815d"},"tmdb":{"avatar_path":null}},"id":548,"iso_639_1":"en","iso_3166_1":"CA","name":"Travis Bell","include_adult":false,"username":"travisbell"}"#
            ))
        let account = try await TMDBClient(settings: try TMDBSettings(Self.tmdb()), upstream: upstream).fetchAccount(
            sessionID: Secret("session-SENTINEL"))
        #expect(account.uid == "548")
        #expect(account.username == "travisbell")
        let request = try #require(await upstream.requests.first)
        #expect(request.query["session_id"] == "session-SENTINEL")
        #expect(request.query["api_key"] == Self.apiKey)
    }

    @Test func anAccountWithoutAnIDIsRefused() async throws {
        let upstream = FakeUpstream()
        await upstream.on(Self.base + "/account", respond: Self.json(#"{"username":"travisbell"}"#))
        let thrown = await brokerError {
            try await TMDBClient(settings: try TMDBSettings(Self.tmdb()), upstream: upstream).fetchAccount(sessionID: Secret("s"))
        }
        #expect(thrown == .upstreamError(step: "account", reason: "the account response has no id"))
    }

    @Test func deletingASessionSendsItInAJSONBody() async throws {
        let upstream = FakeUpstream()
        await upstream.on(Self.base + "/authentication/session", respond: Self.json(#"{"success":true}"#))
        try await TMDBClient(settings: try TMDBSettings(Self.tmdb()), upstream: upstream).deleteSession(
            Secret("2629f70fb498edc263a0adb99118ac41f0053e8c"))
        let request = try #require(await upstream.requests.first)
        #expect(request.method == "DELETE")
        #expect(request.url == Self.base + "/authentication/session?api_key=" + Self.apiKey)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: String])
        #expect(body == ["session_id": "2629f70fb498edc263a0adb99118ac41f0053e8c"])

        await upstream.on(
            Self.base + "/authentication/session",
            respond: Self.json(#"{"status_code":6,"status_message":"Invalid id","success":false}"#, status: 404))
        let thrown = await brokerError {
            try await TMDBClient(settings: try TMDBSettings(Self.tmdb()), upstream: upstream).deleteSession(Secret("s"))
        }
        #expect(thrown == .upstreamError(step: "revoke", reason: "HTTP 404 (not a 2xx status) with TMDB status_code 6"))
    }

    @Test func approvalURLPutsTheTokenInThePathAndEncodesRedirectTo() throws {
        let upstream = FakeUpstream()
        let redirect = "https://broker.example/callback?state=abc-_123"
        let preset = TMDBClient(settings: try TMDBSettings(Self.tmdb()), upstream: upstream)
        #expect(
            preset.approvalURL(requestToken: "ff5c7e", redirectTo: redirect)
                == "https://www.themoviedb.org/authenticate/ff5c7e?redirect_to=https%3A%2F%2Fbroker.example%2Fcallback%3Fstate%3Dabc-_123")
        let moved = TMDBClient(
            settings: try TMDBSettings(Self.tmdb { $0.authenticateURL = "http://127.0.0.1:9/authenticate/" }), upstream: upstream)
        #expect(
            moved.approvalURL(requestToken: "ff5c7e", redirectTo: redirect).hasPrefix("http://127.0.0.1:9/authenticate/ff5c7e?redirect_to=")
        )
    }

    @Test func aTimeoutIsReportedForTheStep() async throws {
        let upstream = FakeUpstream()
        await upstream.on(Self.base + "/authentication/token/new", fail: .timeout)
        let thrown = await brokerError {
            try await TMDBClient(settings: try TMDBSettings(Self.tmdb()), upstream: upstream).createRequestToken()
        }
        #expect(thrown == .upstreamTimeout(step: "request_token"))
    }
}
