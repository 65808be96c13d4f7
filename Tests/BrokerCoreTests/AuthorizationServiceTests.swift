import BrokerCore
import BrokerCrypto
import BrokerTestSupport
import Foundation
import Testing

/// Starting and completing flows: state, PKCE, binding, single use, expiry, denial, and what gets stored.
struct AuthorizationServiceTests {
    /// The decoded query item `name` of `url`.
    private func parameter(_ name: String, of url: String) -> String? {
        URLComponents(string: url)?.queryItems?.first { $0.name == name }?.value
    }

    @Test func redirectURIIsThePublicURLPlusCallback() async throws {
        try await BrokerHarness.with { broker in
            #expect(broker.authorization.redirectURI == "https://broker.example/callback")
            let start = try await broker.begin("github")
            #expect(parameter("redirect_uri", of: start.authorizeURL) == "https://broker.example/callback")
        }
    }

    @Test(arguments: [
        "//evil.com", "/\\evil.com", "/\\t/evil.com", "/\t/evil.com", "/%2F%2Fevil.com", "https://app.example.evil.com",
        "https://evil.com", "https://evil.com/https://app.example", "https://app.example\r\nLocation: https://evil.com",
        "https://app.example/\n", "javascript:alert(1)", "JavaScript://app.example/%0aalert(1)", "https://user@app.example",
        "https://app.example@evil.com", "https://app.example:@evil.com", "https://app.example%2eevil.com", "https:\\\\app.example",
        "http://app.example", "https://app.example:8443/", "ftp://app.example", "data:text/html,hi", "/done", "app.example",
        "https://app.example./", "https://", "", " https://app.example", "https://app.example/caf\u{e9}",
    ])
    func openRedirectCorpusIsRefused(returnTo: String) async throws {
        try await BrokerHarness.with { broker in
            #expect(throws: BrokerError.invalidReturnTo) { try broker.authorization.validateReturnTo(returnTo) }
            let thrown = await brokerError { try await broker.begin("github", returnTo: returnTo) }
            #expect(thrown == .invalidReturnTo)
            #expect(FileProbe.names(broker.flows.flowsDirectory).isEmpty)
        }
    }

    @Test(arguments: [
        "https://app.example", "https://app.example/", "https://app.example/done?tab=1#top", "https://APP.Example/done",
        "HTTPS://app.example/x", "https://app.example:443/x",
    ])
    func allowedOriginIsAcceptedAsGiven(returnTo: String) async throws {
        try await BrokerHarness.with { broker in
            let validated = try broker.authorization.validateReturnTo(returnTo)
            #expect(validated == returnTo)
        }
    }

    @Test func noReturnToIsNil() async throws {
        try await BrokerHarness.with { broker in
            let validated = try broker.authorization.validateReturnTo(nil)
            #expect(validated == nil)
        }
    }

    @Test func allowlistComparesSchemeHostAndPort() {
        let allowlist = ReturnToAllowlist(["http://localhost:3000", "https://[::1]:8443/", "not an origin", "https://x.example/path"])
        #expect(allowlist.origins.map(\.description).sorted() == ["http://localhost:3000", "https://[::1]:8443"])
        #expect(allowlist.allows("http://localhost:3000/cb"))
        #expect(allowlist.allows("https://[::1]:8443/cb"))
        #expect(!allowlist.allows("http://localhost:3001/cb"))
        #expect(!allowlist.allows("https://localhost:3000/cb"))
        #expect(!allowlist.allows("https://x.example/path"))
    }

    @Test func tenThousandStatesAreDistinctWith256Bits() {
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let state = AuthorizationService.makeState()
            #expect(Base64URL.decode(state)?.count == 32)
            seen.insert(state)
        }
        #expect(seen.count == 10_000)
    }

    @Test func googleFlowIsStoredWithVerifierBindingAndExpiry() async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.begin("google", nonce: "nonce-1", returnTo: "https://app.example/done")
            #expect(start.expiresAt == Date.fixture.addingTimeInterval(BrokerHarness.flowTTL))
            #expect(parameter("state", of: start.authorizeURL) == start.state)
            let flow = try #require(try await broker.flows.take(state: start.state, now: .fixture))
            #expect(flow.provider == "google")
            #expect(flow.binding == AuthorizationService.binding(forCookieNonce: "nonce-1"))
            #expect(flow.returnTo == "https://app.example/done")
            #expect(flow.expiresAt == start.expiresAt)
            let verifier = try #require(flow.codeVerifier?.value)
            #expect(parameter("code_challenge", of: start.authorizeURL) == PKCE.challenge(for: verifier))
            #expect(parameter("code_challenge_method", of: start.authorizeURL) == "S256")
            #expect(!start.authorizeURL.contains(verifier))
        }
    }

    @Test func weiboFlowHasNoPKCE() async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.begin("weibo")
            #expect(parameter("code_challenge", of: start.authorizeURL) == nil)
            #expect(try await broker.flows.take(state: start.state, now: .fixture)?.codeVerifier == nil)
        }
    }

    @Test func unknownAndUnconfiguredProvidersAreRefused() async throws {
        try await BrokerHarness.with(environment: [:]) { broker in
            let refusal1 = await brokerError { try await broker.begin("myspace") }
            #expect(refusal1 == .unknownProvider("myspace"))
            let thrown = await brokerError { try await broker.begin("weibo") }
            #expect(thrown == .providerNotConfigured("weibo", missing: ["WEIBO_CLIENT_ID", "WEIBO_CLIENT_SECRET"]))
            #expect(thrown?.message.contains("WEIBO_CLIENT_ID") == true)
            #expect(FileProbe.names(broker.flows.flowsDirectory).isEmpty)
        }
    }

    @Test func weiboCallbackStoresTheAccountWithUIDFromTheTokenResponse() async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.begin("weibo", returnTo: "https://app.example/after")
            broker.clock.advance(30)
            let (account, returnTo) = try await broker.callback(start)
            #expect(account.id == "weibo:3733034601")
            #expect(account.accessToken.value == BrokerHarness.weiboAccessToken)
            #expect(account.expiresAt == Date.fixture.addingTimeInterval(30 + 157_679_999))
            #expect(account.createdAt == Date.fixture.addingTimeInterval(30))
            #expect(account.status == .active)
            #expect(returnTo == "https://app.example/after")
            #expect(try await broker.accounts.get(id: "weibo:3733034601") == account)
            let token = try #require(await broker.upstream.requests(to: broker.tokenURL("weibo")).first)
            #expect(token.form["code"] == "code-SENTINEL-1")
            #expect(token.form["redirect_uri"] == parameter("redirect_uri", of: start.authorizeURL))
            #expect(token.form["code_verifier"] == nil)
            #expect(await broker.upstream.requests(to: "https://api.weibo.com/2/").isEmpty)
        }
    }

    @Test func googleCallbackSendsTheVerifierOfTheChallengeAndTakesTheIDTokensSub() async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.begin("google")
            let (account, returnTo) = try await broker.callback(start)
            #expect(returnTo == nil)
            #expect(account.id == "google:110169484474386276334")
            #expect(account.refreshToken?.value == BrokerHarness.googleRefreshToken)
            #expect(account.screenName == "Ada Lovelace")
            let token = try #require(await broker.upstream.requests(to: broker.tokenURL("google")).first)
            let verifier = try #require(token.form["code_verifier"])
            #expect(PKCE.challenge(for: verifier) == parameter("code_challenge", of: start.authorizeURL))
            #expect(parameter("nonce", of: start.authorizeURL)?.utf8.count == 43)
            // The ID token names the user and carries the name: no userinfo call.
            #expect(await broker.upstream.requests(to: "https://openidconnect.googleapis.com/").isEmpty)
        }
    }

    @Test func githubCallbackKeysTheAccountOnTheNumericID() async throws {
        try await BrokerHarness.with { broker in
            let (account, _) = try await broker.callback(try await broker.begin("github"))
            #expect(account.id == "github:1")
            #expect(account.screenName == "octocat")
            #expect(account.expiresAt == nil)
        }
    }

    @Test func replayedCallbackIsRefusedWithoutASecondTokenCall() async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.begin("github")
            _ = try await broker.callback(start)
            let replay = await brokerError { try await broker.callback(start) }
            #expect(replay == .invalidState)
            #expect(await broker.tokenCalls("github") == 1)
        }
    }

    @Test func twentyConcurrentCallbacksExchangeTheCodeOnce() async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.begin("github")
            let successes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<20 {
                    group.addTask { (try? await broker.callback(start)) != nil }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(successes == 1)
            #expect(await broker.tokenCalls("github") == 1)
        }
    }

    @Test func expiredFlowIsRefusedWithoutATokenCall() async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.begin("google")
            broker.clock.advance(BrokerHarness.flowTTL)
            let refusal2 = await brokerError { try await broker.callback(start) }
            #expect(refusal2 == .invalidState)
            #expect(await broker.tokenCalls("google") == 0)
        }
    }

    @Test func flowJustBeforeExpiryStillCompletes() async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.begin("google")
            broker.clock.advance(BrokerHarness.flowTTL - 1)
            _ = try await broker.callback(start)
        }
    }

    @Test(arguments: [nil, "", "cookie-nonce-B", "cookie-nonce-A "])
    func foreignOrMissingBindingIsRefusedWithoutATokenCall(proof: String?) async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.begin("github", nonce: "cookie-nonce-A")
            let refusal3 = await brokerError { try await broker.callback(start, nonce: proof) }
            #expect(refusal3 == .invalidState)
            #expect(await broker.tokenCalls("github") == 0)
            // The attempt used the state up: the right browser must start again.
            let refusal4 = await brokerError { try await broker.callback(start) }
            #expect(refusal4 == .invalidState)
        }
    }

    @Test func apiBoundFlowNeedsNoCookie() async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.authorization.begin(provider: "github", returnTo: nil, binding: AuthorizationService.apiBinding)
            let (account, _) = try await broker.callback(start, nonce: nil)
            #expect(account.id == "github:1")
        }
    }

    @Test(arguments: ["", "unknown-state-0123456789", "../../etc/passwd", "c3RhdGU"])
    func unknownStateIsRefusedWithoutATokenCall(state: String) async throws {
        try await BrokerHarness.with { broker in
            _ = try await broker.begin("github")
            let thrown = await brokerError {
                try await broker.authorization.complete(
                    state: state, bindingProof: "cookie-nonce-A", query: ["code": "code-SENTINEL", "state": state])
            }
            #expect(thrown == .invalidState)
            #expect(await broker.tokenCalls("github") == 0)
        }
    }

    @Test func deniedAuthorizationMakesNoTokenCall() async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.begin("weibo")
            let query = [
                "error": "access_denied", "error_description": "user denied your request.", "error_code": "21330", "state": start.state,
            ]
            let thrown = await brokerError {
                try await broker.authorization.complete(state: start.state, bindingProof: "cookie-nonce-A", query: query)
            }
            #expect(thrown == .accessDenied)
            #expect(await broker.tokenCalls("weibo") == 0)
            #expect(try await broker.accounts.list(provider: nil).isEmpty)
        }
    }

    @Test func callbackWithoutCodeIsABadRequest() async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.begin("github")
            let thrown = await brokerError {
                try await broker.authorization.complete(state: start.state, bindingProof: "cookie-nonce-A", query: ["state": start.state])
            }
            #expect(thrown?.code == "bad_request")
            #expect(await broker.tokenCalls("github") == 0)
        }
    }

    @Test func reauthorizationUpdatesTheSameRecordAndKeepsCreatedAt() async throws {
        try await BrokerHarness.with { broker in
            let first = try await broker.callback(try await broker.begin("google")).account
            broker.clock.advance(86_400)
            await broker.answerGoogleToken(accessToken: "ya29.second", refreshToken: "1//second", expiresIn: 100)
            let second = try await broker.callback(try await broker.begin("google"), code: "code-2").account
            #expect(second.id == first.id)
            #expect(second.createdAt == Date.fixture)
            #expect(second.updatedAt == Date.fixture.addingTimeInterval(86_400))
            #expect(second.accessToken.value == "ya29.second")
            #expect(second.refreshToken?.value == "1//second")
            #expect(second.expiresAt == Date.fixture.addingTimeInterval(86_400 + 100))
            #expect(try await broker.accounts.list(provider: nil) == [second])
        }
    }

    @Test func reauthorizationWithoutANewRefreshTokenKeepsTheOldOne() async throws {
        try await BrokerHarness.with { broker in
            _ = try await broker.callback(try await broker.begin("google"))
            await broker.answerGoogleToken(accessToken: "ya29.third", refreshToken: nil, expiresIn: 3599)
            let again = try await broker.callback(try await broker.begin("google")).account
            #expect(again.accessToken.value == "ya29.third")
            #expect(again.refreshToken?.value == BrokerHarness.googleRefreshToken)
        }
    }

    @Test func providerFailureStoresNothingAndLeaksNothing() async throws {
        try await BrokerHarness.with { broker in
            let failures: [(UpstreamResponse?, UpstreamError?, String)] = [
                (ProviderWire.weiboInvalidGrant(code: "code-SENTINEL-1"), nil, "invalid_grant (21325)"),
                (ProviderWire.htmlError, nil, "HTTP 502"),
                (ProviderWire.response(200, "text/plain", #"{"uid":"1","expires_in":3600}"#), nil, "no access_token"),
                (nil, .transport(.connectRefused, "connection refused"), "connection refused"),
            ]
            for (response, failure, expected) in failures {
                if let response { await broker.upstream.on(broker.tokenURL("weibo"), respond: response) }
                if let failure { await broker.upstream.on(broker.tokenURL("weibo"), fail: failure) }
                let thrown = await brokerError { try await broker.callback(try await broker.begin("weibo")) }
                guard case .upstreamError("token_exchange", let reason) = thrown else {
                    Issue.record("got \(String(describing: thrown))"); continue
                }
                #expect(reason.contains(expected))
                #expect(thrown?.message.contains("SENTINEL") == false)
            }
            let stored = try await broker.accounts.list(provider: nil)
            #expect(stored.isEmpty)
        }
    }

    @Test func slowProviderIsAnUpstreamTimeoutAndStoresNothing() async throws {
        try await BrokerHarness.with { broker in
            await broker.upstream.on("https://api.github.com/user", fail: .timeout)
            let thrown = await brokerError { try await broker.callback(try await broker.begin("github")) }
            #expect(thrown == .upstreamTimeout(step: "user_info"))
            #expect(thrown?.code == "upstream_timeout")
            let stored = try await broker.accounts.list(provider: nil)
            #expect(stored.isEmpty)
        }
    }

    @Test func unwritableStoreIsStorageUnavailable() async throws {
        try await BrokerHarness.with { broker in
            let start = try await broker.begin("github")
            // The account journal stays open, so removing or locking files would not stop its appends (and root ignores
            // permission bits): its descriptor is pointed at /dev/full instead, whose writes fail with ENOSPC as a full disk's do.
            let restore = try FullDisk.fillAccountJournal(in: broker.accounts.dataDirectory)
            defer { try? restore() }
            let thrown = await brokerError { try await broker.callback(start) }
            #expect(thrown?.code == "storage_unavailable")
            #expect(thrown?.message.contains("SENTINEL") == false)
            #expect(try await broker.accounts.list(provider: nil).isEmpty)
        }
    }
}
