import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

/// The Twitter (OAuth 1.0a) flow through ``AuthorizationService``: request token bound to the flow, verifier exchange, account.
struct TwitterFlowTests {
    static let consumerKey = "cChZNFj6T5R0TigYB9yd1w"
    static let consumerSecret = "L8qq9PZyRg6ieKGEKhZolGC0vJWLw8iEJ88DRdyOg-SENTINEL"
    static let requestToken = "NPcudxy0yU5T3tBzho7iCotZ3cnetKwcTIRlX0iwRl0"
    static let requestSecret = "veNRnAWe6inFuo8o2u8SLLZLjolYDmDP7SzL0YfYI-SENTINEL"
    static let accessToken = "6253282-eWudHldSbIaelX7swmsiHImEL4KinwaGloHANdrY-SENTINEL"
    static let accessSecret = "2EEfA6BG5ly3sR3XjE0IBSnlQu4ZrUzPiYTmrkVU-SENTINEL"
    static let verifier = "pDNg57prOHapMbhv25RNf75lVRd6JDsni1AJJIDYoTY-SENTINEL"
    static let environment = BrokerHarness.environment.merging([
        "TWITTER_CONSUMER_KEY": consumerKey, "TWITTER_CONSUMER_SECRET": consumerSecret,
    ]) { $1 }

    static let requestTokenURL = "https://api.twitter.com/oauth/request_token"
    static let accessTokenURL = "https://api.twitter.com/oauth/access_token"
    static let verifyURL = "https://api.twitter.com/1.1/account/verify_credentials.json"

    /// Runs `body` with Twitter configured and answering as it does on a good day.
    static func with(_ body: (BrokerHarness) async throws -> Void) async throws {
        try await BrokerHarness.with(environment: environment) { broker in
            await broker.upstream.on(
                requestTokenURL,
                respond: OAuth1ClientTests.form(
                    "oauth_token=\(requestToken)&oauth_token_secret=\(requestSecret)&oauth_callback_confirmed=true"))
            await broker.upstream.on(
                accessTokenURL,
                respond: OAuth1ClientTests.form(
                    "oauth_token=\(accessToken)&oauth_token_secret=\(accessSecret)&user_id=6253282&screen_name=twitterapi"))
            await broker.upstream.on(verifyURL, respond: verifyAnswer(id: "6253282", screenName: "TwitterAPI"))
            try await body(broker)
        }
    }

    /// `verify_credentials`' user object.
    static func verifyAnswer(id: String, screenName: String) -> UpstreamResponse {
        UpstreamResponse(
            status: 200, headers: [("Content-Type", "application/json;charset=utf-8")],
            body: Array(#"{"id":\#(id),"id_str":"\#(id)","name":"Twitter API","screen_name":"\#(screenName)"}"#.utf8))
    }

    /// The callback Twitter sends the browser back with.
    static let approved = ["oauth_token": requestToken, "oauth_verifier": verifier]

    /// Completes `start` with `query`, presenting the cookie `nonce`.
    static func complete(
        _ broker: BrokerHarness, _ start: AuthorizationStart, _ query: [String: String] = approved,
        nonce: String? = "cookie-nonce-A"
    ) async throws(BrokerError) -> Account {
        try await broker.authorization.complete(state: start.state, bindingProof: nonce, query: query).account
    }

    @Test func beginSignsTheRequestTokenCallAndKeepsItsSecretInTheFlowOnly() async throws {
        try await Self.with { broker in
            let start = try await broker.begin("twitter")
            #expect(start.authorizeURL == "https://api.twitter.com/oauth/authorize?oauth_token=\(Self.requestToken)")
            #expect(!start.authorizeURL.contains("oauth_callback"))
            #expect(start.expiresAt == Date.fixture.addingTimeInterval(BrokerHarness.flowTTL))
            let request = try #require(await broker.upstream.requests(to: Self.requestTokenURL).first)
            let oauth = OAuth1ClientTests.oauthParameters(request)
            #expect(oauth["oauth_callback"] == "https://broker.example/callback")
            #expect(oauth["oauth_consumer_key"] == Self.consumerKey)
            #expect(oauth["oauth_timestamp"] == String(Int(Date.fixture.timeIntervalSince1970)))
            #expect(OAuth1ClientTests.signatureIsValid(request, consumerSecret: Self.consumerSecret, tokenSecret: nil))
            #expect(!OAuth1ClientTests.signatureIsValid(request, consumerSecret: "wrong", tokenSecret: nil))
            let flow = try #require(try await broker.flows.take(state: start.state, now: .fixture))
            #expect(flow.requestToken == Self.requestToken)
            #expect(flow.requestTokenSecret?.value == Self.requestSecret)
            #expect(flow.binding == AuthorizationService.binding(forCookieNonce: "cookie-nonce-A"))
            #expect(!String(describing: flow).contains("SENTINEL"))
        }
    }

    @Test func aBackEndDrivenFlowCarriesItsStateInTheCallback() async throws {
        try await Self.with { broker in
            let start = try await broker.authorization.begin(provider: "twitter", returnTo: nil, binding: AuthorizationService.apiBinding)
            let request = try #require(await broker.upstream.requests(to: Self.requestTokenURL).first)
            #expect(OAuth1ClientTests.oauthParameters(request)["oauth_callback"] == "https://broker.example/callback?state=\(start.state)")
            var query = Self.approved
            query["state"] = start.state
            let (account, _) = try await broker.authorization.complete(state: start.state, bindingProof: nil, query: query)
            #expect(account.id == "twitter:6253282")
        }
    }

    @Test func anUnconfirmedCallbackStoresNoFlow() async throws {
        try await Self.with { broker in
            await broker.upstream.on(
                Self.requestTokenURL,
                respond: OAuth1ClientTests.form(
                    "oauth_token=\(Self.requestToken)&oauth_token_secret=\(Self.requestSecret)"))
            let thrown = await brokerError { try await broker.begin("twitter") }
            #expect(thrown == .upstreamError(step: "request_token", reason: "oauth_callback_confirmed is not true"))
            #expect(FileProbe.names(broker.flows.flowsDirectory).isEmpty)
        }
    }

    @Test func theCallbackTradesTheVerifierAndStoresTokenAndSecretWithoutExpiry() async throws {
        try await Self.with { broker in
            let start = try await broker.begin("twitter", returnTo: "https://app.example/after")
            broker.clock.advance(20)
            let (account, returnTo) = try await broker.authorization.complete(
                state: start.state, bindingProof: "cookie-nonce-A", query: Self.approved)
            #expect(returnTo == "https://app.example/after")
            #expect(account.id == "twitter:6253282")
            #expect(account.accessToken.value == Self.accessToken)
            #expect(account.tokenSecret?.value == Self.accessSecret)
            #expect(account.screenName == "TwitterAPI")
            #expect(account.expiresAt == nil)
            #expect(account.refreshToken == nil)
            #expect(try await broker.accounts.get(id: "twitter:6253282") == account)

            let exchange = try #require(await broker.upstream.requests(to: Self.accessTokenURL).first)
            let oauth = OAuth1ClientTests.oauthParameters(exchange)
            #expect(oauth["oauth_token"] == Self.requestToken)
            #expect(oauth["oauth_verifier"] == Self.verifier)
            #expect(oauth["oauth_timestamp"] == String(Int(Date.fixture.timeIntervalSince1970) + 20))
            #expect(OAuth1ClientTests.signatureIsValid(exchange, consumerSecret: Self.consumerSecret, tokenSecret: Self.requestSecret))
            let verify = try #require(await broker.upstream.requests(to: Self.verifyURL).first)
            #expect(OAuth1ClientTests.oauthParameters(verify)["oauth_token"] == Self.accessToken)
            #expect(OAuth1ClientTests.signatureIsValid(verify, consumerSecret: Self.consumerSecret, tokenSecret: Self.accessSecret))
        }
    }

    @Test func aRefusedProfileStillStoresTheAccountNamedByTheAccessToken() async throws {
        try await Self.with { broker in
            await broker.upstream.on(
                Self.verifyURL,
                respond: UpstreamResponse(
                    status: 403, headers: [("Content-Type", "application/json")],
                    body: Array(
                        #"{"errors":[{"message":"You currently have access to a subset of X API V2 endpoints","code":453}]}"#.utf8)))
            let account = try await Self.complete(broker, try await broker.begin("twitter"))
            #expect(account.id == "twitter:6253282")
            #expect(account.screenName == "twitterapi")
        }
    }

    @Test func aProfileOfAnotherUserFailsTheFlowAndStoresNothing() async throws {
        try await Self.with { broker in
            await broker.upstream.on(Self.verifyURL, respond: Self.verifyAnswer(id: "783214", screenName: "twitter"))
            let start = try await broker.begin("twitter")
            let thrown = await brokerError { try await Self.complete(broker, start) }
            #expect(thrown?.code == "upstream_error")
            #expect(try await broker.accounts.list(provider: nil).isEmpty)
        }
    }

    @Test func aProfileNamingALookAlikeOfTheUserFailsTheFlow() async throws {
        try await Self.with { broker in
            // user_id=Kay in the access token answer; the profile says U+212A KELVIN SIGN + "ay", which Swift calls equal.
            await broker.upstream.on(
                Self.accessTokenURL,
                respond: OAuth1ClientTests.form(
                    "oauth_token=\(Self.accessToken)&oauth_token_secret=\(Self.accessSecret)&user_id=Kay&screen_name=kay"))
            await broker.upstream.on(
                Self.verifyURL,
                respond: UpstreamResponse(
                    status: 200, headers: [("Content-Type", "application/json")],
                    body: Array(#"{"id_str":"\u212Aay","screen_name":"kay"}"#.utf8)))
            let start = try await broker.begin("twitter")
            let thrown = await brokerError { try await Self.complete(broker, start) }
            #expect(thrown?.code == "upstream_error")
            #expect(try await broker.accounts.list(provider: nil).isEmpty)
        }
    }

    @Test func withoutUserIDTheProfileNamesTheUser() async throws {
        try await Self.with { broker in
            await broker.upstream.on(
                Self.accessTokenURL,
                respond: OAuth1ClientTests.form(
                    "oauth_token=\(Self.accessToken)&oauth_token_secret=\(Self.accessSecret)"))
            let account = try await Self.complete(broker, try await broker.begin("twitter"))
            #expect(account.id == "twitter:6253282")
            #expect(account.screenName == "TwitterAPI")
        }
    }

    @Test(arguments: [
        ["oauth_token": "attackers-request-token", "oauth_verifier": TwitterFlowTests.verifier],
        ["oauth_token": TwitterFlowTests.requestToken + "x", "oauth_verifier": TwitterFlowTests.verifier],
        ["oauth_token": "", "oauth_verifier": TwitterFlowTests.verifier],
        ["oauth_verifier": TwitterFlowTests.verifier],
    ])
    func aTokenNotIssuedToThisFlowIsRefusedWithoutAnExchange(query: [String: String]) async throws {
        try await Self.with { broker in
            let start = try await broker.begin("twitter")
            let thrown = await brokerError { try await Self.complete(broker, start, query) }
            #expect(thrown == .invalidState)
            // The flow was used up by the attempt: the right token cannot follow.
            let retry = await brokerError { try await Self.complete(broker, start) }
            #expect(retry == .invalidState)
            #expect(await broker.upstream.requests(to: Self.accessTokenURL).isEmpty)
        }
    }

    @Test(arguments: [
        ["denied": TwitterFlowTests.requestToken], ["denied": "someone-elses-token"],
        ["denied": TwitterFlowTests.requestToken, "oauth_token": TwitterFlowTests.requestToken],
    ])
    func aDenialIsAccessDeniedWithoutAnExchange(query: [String: String]) async throws {
        try await Self.with { broker in
            let thrown = await brokerError { try await Self.complete(broker, try await broker.begin("twitter"), query) }
            #expect(thrown == .accessDenied)
            #expect(await broker.upstream.requests(to: Self.accessTokenURL).isEmpty)
        }
    }

    @Test func aCallbackWithoutVerifierIsABadRequest() async throws {
        try await Self.with { broker in
            let thrown = await brokerError {
                try await Self.complete(broker, try await broker.begin("twitter"), ["oauth_token": Self.requestToken])
            }
            #expect(thrown?.code == "bad_request")
            #expect(await broker.upstream.requests(to: Self.accessTokenURL).isEmpty)
        }
    }

    @Test(arguments: [nil, "cookie-nonce-B"])
    func anotherBrowserCannotCompleteTheFlow(nonce: String?) async throws {
        try await Self.with { broker in
            let thrown = await brokerError { try await Self.complete(broker, try await broker.begin("twitter"), nonce: nonce) }
            #expect(thrown == .invalidState)
            #expect(await broker.upstream.requests(to: Self.accessTokenURL).isEmpty)
        }
    }

    @Test func aRejectedVerifierIs502AndStoresNothing() async throws {
        try await Self.with { broker in
            await broker.upstream.on(
                Self.accessTokenURL,
                respond: UpstreamResponse(
                    status: 401, headers: [("Content-Type", "text/html; charset=utf-8")],
                    body: Array("Error processing your OAuth request: Invalid oauth_verifier parameter".utf8)))
            let thrown = await brokerError { try await Self.complete(broker, try await broker.begin("twitter")) }
            #expect(thrown == .upstreamError(step: "access_token", reason: "HTTP 401 (not a 2xx status)"))
            #expect(thrown?.message == "The provider's access token failed: HTTP 401 (not a 2xx status).")
            let stored = try await broker.accounts.list(provider: nil)
            #expect(stored.isEmpty)
        }
    }

    @Test func reauthorizingKeepsCreatedAtAndReplacesTheTokens() async throws {
        try await Self.with { broker in
            let first = try await Self.complete(broker, try await broker.begin("twitter"))
            broker.clock.advance(60)
            await broker.upstream.on(
                Self.accessTokenURL,
                respond: OAuth1ClientTests.form(
                    "oauth_token=second-token&oauth_token_secret=second-secret&user_id=6253282&screen_name=twitterapi"))
            let second = try await Self.complete(broker, try await broker.begin("twitter"))
            #expect(second.createdAt == first.createdAt)
            #expect(second.updatedAt == first.updatedAt.addingTimeInterval(60))
            #expect(second.tokenSecret?.value == "second-secret")
            #expect(try await broker.accounts.list(provider: "twitter").count == 1)
        }
    }

    @Test func deletingATwitterAccountCallsNoRevokeEndpoint() async throws {
        try await Self.with { broker in
            _ = try await Self.complete(broker, try await broker.begin("twitter"))
            let before = await broker.upstream.requests.count
            let result = try await broker.accountService.delete(id: "twitter:6253282")
            #expect(result.revoked == nil)
            #expect(await broker.upstream.requests.count == before)
            #expect(try await broker.accounts.get(id: "twitter:6253282") == nil)
        }
    }
}
