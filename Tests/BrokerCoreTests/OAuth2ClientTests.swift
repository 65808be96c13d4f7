import BrokerCore
import BrokerCrypto
import BrokerTestSupport
import Foundation
import Testing

/// Authorize URLs, the token request, user lookup and revocation against each preset's real wire format.
struct OAuth2ClientTests {
    private static let redirectURI = "https://broker.example/callback"

    private func client(_ name: String, upstream: FakeUpstream = FakeUpstream(), edit: (inout ProviderConfiguration) -> Void = { _ in })
        throws -> OAuth2Client
    {
        var provider = try #require(
            try ProviderRegistry.load(environment: BrokerHarness.environment, providersFile: nil).provider(named: name))
        if provider.kind == .oidc { provider = try provider.oauth2Configuration(discovered: GoogleOpenID.metadata) }
        edit(&provider)
        return OAuth2Client(settings: try OAuth2Settings(provider), redirectURI: Self.redirectURI, upstream: upstream)
    }

    /// The query items of `url`, decoded, in order.
    private func items(_ url: String) throws -> [(String, String)] {
        let components = try #require(URLComponents(string: url))
        return (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }
    }

    private func value(_ name: String, in url: String) throws -> String? {
        try items(url).first { $0.0 == name }?.1
    }

    @Test func weiboAuthorizeURLHasNoPKCEAndCommaSeparatedScopes() throws {
        let weibo = try client("weibo") { $0.scopes = ["email", "follow_app_official_microblog"] }
        let url = weibo.authorizeURL(state: "state-123", codeChallenge: nil)
        #expect(url.hasPrefix("https://api.weibo.com/oauth2/authorize?"))
        #expect(try items(url).map(\.0) == ["client_id", "redirect_uri", "response_type", "scope", "state"])
        #expect(try value("client_id", in: url) == "1234567890")
        #expect(try value("redirect_uri", in: url) == Self.redirectURI)
        #expect(try value("response_type", in: url) == "code")
        #expect(try value("scope", in: url) == "email,follow_app_official_microblog")
        #expect(url.contains("scope=email%2Cfollow_app_official_microblog"))
        #expect(url.contains("redirect_uri=https%3A%2F%2Fbroker.example%2Fcallback"))
        #expect(try value("code_challenge", in: url) == nil)
    }

    @Test func googleAuthorizeURLHasS256ChallengeOfflineAccessAndConsent() throws {
        let verifier = PKCE.makeVerifier()
        let url = try client("google").authorizeURL(state: "s", codeChallenge: PKCE.challenge(for: verifier))
        #expect(url.hasPrefix("https://accounts.google.com/o/oauth2/v2/auth?"))
        #expect(try value("code_challenge", in: url) == PKCE.challenge(for: verifier))
        #expect(try value("code_challenge_method", in: url) == "S256")
        #expect(try value("access_type", in: url) == "offline")
        #expect(try value("prompt", in: url) == "consent")
        #expect(try value("scope", in: url) == "openid email profile")
        #expect(url.contains("scope=openid%20email%20profile"))
        #expect(!url.contains("plain"))
    }

    @Test func githubAuthorizeURLAsksForPKCEAndReadUser() throws {
        let url = try client("github").authorizeURL(state: "s", codeChallenge: "challenge")
        #expect(url.hasPrefix("https://github.com/login/oauth/authorize?"))
        #expect(try value("scope", in: url) == "read:user")
        #expect(try value("code_challenge_method", in: url) == "S256")
    }

    @Test func authorizeURLWithAQueryAlreadyAppendsWithAmpersandAndEncodesEveryValue() throws {
        let custom = try client("github") {
            $0.authorizeURL = "https://id.example/authorize?tenant=acme"
            $0.extraAuthorizeParameters = [("login_hint", "ada lovelace+1@example.com")]
        }
        let url = custom.authorizeURL(state: "a/b=c&d", codeChallenge: nil)
        #expect(url.hasPrefix("https://id.example/authorize?tenant=acme&client_id="))
        #expect(try value("state", in: url) == "a/b=c&d")
        #expect(try value("login_hint", in: url) == "ada lovelace+1@example.com")
        #expect(url.contains("login_hint=ada%20lovelace%2B1%40example.com"))
    }

    @Test func exchangePostsTheFormWithSecretPostAndVerifier() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            "https://oauth2.googleapis.com/token", respond: ProviderWire.googleToken(accessToken: "ya29", refreshToken: "1//r"))
        let grant = try await client("google", upstream: upstream).exchange(code: "4/P7q7W91a+code", codeVerifier: "verifier-1")
        #expect(grant.accessToken.value == "ya29")
        let request = try #require(await upstream.requests.first)
        #expect(request.method == "POST")
        #expect(request.header("content-type") == "application/x-www-form-urlencoded")
        #expect(request.header("Accept") == "application/json")
        #expect(request.header("Authorization") == nil)
        #expect(
            request.form == [
                "grant_type": "authorization_code", "code": "4/P7q7W91a+code", "redirect_uri": Self.redirectURI,
                "code_verifier": "verifier-1", "client_id": "google-id.apps.googleusercontent.com",
                "client_secret": "google-secret-SENTINEL",
            ])
    }

    @Test func exchangeWithClientSecretBasicSendsTheEncodedCredentialsInAHeader() async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://github.com/login/oauth/access_token", respond: ProviderWire.githubTokenJSON(accessToken: "gho_1"))
        let github = try client("github", upstream: upstream) {
            $0.clientAuthentication = .clientSecretBasic
            $0.clientID = "id:with space"
        }
        _ = try await github.exchange(code: "c", codeVerifier: nil)
        let request = try #require(await upstream.requests.first)
        let header = try #require(request.header("Authorization"))
        #expect(header.hasPrefix("Basic "))
        let decoded = try #require(Base64.decode(String(header.dropFirst(6))))
        // RFC 6749 §2.3.1: each part is form-encoded before joining with ':'.
        #expect(String(decoding: decoded, as: UTF8.self) == "id%3Awith%20space:github-secret-SENTINEL")
        #expect(request.form["client_secret"] == nil)
        #expect(request.form["code_verifier"] == nil)
    }

    @Test func timeoutBecomesUpstreamTimeout() async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://oauth2.googleapis.com/token", fail: .timeout)
        let subject = try client("google", upstream: upstream)
        let thrown = await brokerError { try await subject.exchange(code: "code-SENTINEL", codeVerifier: nil) }
        #expect(thrown == .upstreamTimeout(step: "token_exchange"))
    }

    @Test func transportErrorIsNamedWithoutTheURLOrCode() async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://oauth2.googleapis.com/token", fail: .transport(.connectRefused, "connection refused"))
        let subject = try client("google", upstream: upstream)
        let thrown = await brokerError { try await subject.exchange(code: "code-SENTINEL", codeVerifier: nil) }
        #expect(thrown == .upstreamError(step: "token_exchange", reason: "transport error: connection refused"))
        #expect(thrown?.message.contains("SENTINEL") == false)
    }

    @Test func anErrorReasonNeverRepeatsTheCodeVerifierOrSecret() async throws {
        let upstream = FakeUpstream()
        // A provider that puts the code in its error name: plain characters, so only redaction keeps it out.
        await upstream.on(
            "https://oauth2.googleapis.com/token",
            respond: ProviderWire.response(400, "application/json", #"{"error":"bad code-SENTINEL-9"}"#))
        let subject = try client("google", upstream: upstream)
        let thrown = await brokerError { try await subject.exchange(code: "code-SENTINEL-9", codeVerifier: "v") }
        guard case .upstreamError(_, let reason) = thrown else {
            Issue.record("expected an upstream error, got \(String(describing: thrown))"); return
        }
        #expect(!reason.contains("SENTINEL"))
        #expect(reason.contains("<redacted>"))
    }

    @Test(arguments: [false, true])
    func weiboUserIsTheUIDOfGetUIDWithTheTokenAsParameter(asNumber: Bool) async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://api.weibo.com/2/account/get_uid.json", respond: ProviderWire.weiboUID("3456676543", asNumber: asNumber))
        let user = try await client("weibo", upstream: upstream).fetchUser(accessToken: Secret("2.00token"))
        #expect(user.uid == "3456676543")
        let request = try #require(await upstream.requests.first)
        #expect(request.method == "GET")
        #expect(request.query["access_token"] == "2.00token")
        #expect(request.header("Authorization") == nil)
    }

    @Test func githubUserIsTheNumericIDWithLoginAndABearerToken() async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://api.github.com/user", respond: ProviderWire.githubUser(id: 583231, login: "octocat"))
        let user = try await client("github", upstream: upstream).fetchUser(accessToken: Secret("gho_abc"))
        #expect(user.uid == "583231")
        #expect(user.screenName == "octocat")
        let request = try #require(await upstream.requests.first)
        #expect(request.header("Authorization") == "Bearer gho_abc")
        #expect(request.header("User-Agent") != nil)
        #expect(!request.url.contains("gho_abc"))
    }

    @Test func googleUserIsTheSubOfUserinfo() async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://openidconnect.googleapis.com/v1/userinfo", respond: ProviderWire.googleUserinfo(sub: "1101694"))
        let user = try await client("google", upstream: upstream).fetchUser(accessToken: Secret("ya29"))
        #expect(user.uid == "1101694")
        #expect(user.screenName == "Ada Lovelace")
    }

    @Test func userResponseWithoutTheIDFieldNamesTheField() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            "https://openidconnect.googleapis.com/v1/userinfo", respond: ProviderWire.response(200, "application/json", #"{"id":"legacy"}"#)
        )
        let subject = try client("google", upstream: upstream)
        let thrown = await brokerError { try await subject.fetchUser(accessToken: Secret("ya29-SENTINEL")) }
        #expect(thrown == .upstreamError(step: "user_info", reason: "the user response has no sub"))
    }

    @Test func googleRevocationPostsTheRefreshTokenWithoutClientCredentials() async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://oauth2.googleapis.com/revoke", respond: UpstreamResponse(status: 200))
        var account = Account.make(provider: "google", uid: "1101694")
        account.refreshToken = Secret("1//refresh")
        try await client("google", upstream: upstream).revoke(account: account)
        let request = try #require(await upstream.requests.first)
        #expect(request.method == "POST")
        #expect(request.form == ["token": "1//refresh", "token_type_hint": "refresh_token"])
    }

    @Test func weiboRevocationPostsTheAccessTokenAndReadsTheResult() async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://api.weibo.com/oauth2/revokeoauth2", respond: ProviderWire.weiboRevoked)
        let account = Account.make(provider: "weibo", uid: "3733034601", accessToken: "2.00weibo")
        try await client("weibo", upstream: upstream).revoke(account: account)
        #expect(await upstream.requests.first?.form == ["access_token": "2.00weibo"])

        await upstream.on(
            "https://api.weibo.com/oauth2/revokeoauth2", respond: ProviderWire.response(200, "text/plain", #"{"result":"false"}"#))
        let subject = try client("weibo", upstream: upstream)
        let thrown = await brokerError { try await subject.revoke(account: account) }
        #expect(thrown == .upstreamError(step: "revoke", reason: "HTTP 200 with result false"))
    }

    @Test func customRevocationAuthenticatesTheClient() async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://id.example/revoke", respond: UpstreamResponse(status: 200))
        let custom = try client("github", upstream: upstream) {
            $0.revokeURL = "https://id.example/revoke"
            $0.revokeAuthenticatesClient = true
        }
        try await custom.revoke(account: Account.make(provider: "github", accessToken: "gho_x"))
        #expect(
            await upstream.requests.first?.form == [
                "token": "gho_x", "token_type_hint": "access_token", "client_id": "Iv1.github-id",
                "client_secret": "github-secret-SENTINEL",
            ])
    }

    @Test func revocationFailureNamesTheStatusAndNoToken() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            "https://oauth2.googleapis.com/revoke", respond: ProviderWire.response(400, "application/json", #"{"error":"invalid_token"}"#))
        let account = Account.make(provider: "google", accessToken: "ya29-SENTINEL")
        let subject = try client("google", upstream: upstream)
        let thrown = await brokerError { try await subject.revoke(account: account) }
        #expect(thrown == .upstreamError(step: "revoke", reason: "HTTP 400 (not a 2xx status) with error invalid_token"))
    }

    @Test func noRevokeEndpointMeansNoRequest() async throws {
        let upstream = FakeUpstream()
        try await client("github", upstream: upstream).revoke(account: Account.make(provider: "github"))
        #expect(await upstream.requests.isEmpty)
    }
}
