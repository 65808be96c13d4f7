import BrokerCore
import BrokerCrypto
import Foundation
import Testing

/// The OAuth 1.0a client against Twitter's published vectors and wire formats (providers.md §2).
struct OAuth1ClientTests {
    /// The consumer of Twitter's three-legged vectors (request/oauth-sign tests, from dev.twitter.com).
    static let vectorKey = "GDdmIQH6jhtmLUypg82g"
    static let vectorSecret = "MCD8BKwGdgPHvAuvgvz4EQpqDAtx89grbuNMRd7Eh98"

    /// The twitter preset with `key` and `secret`, and `overrides` applied.
    static func twitter(
        key: String = vectorKey, secret: String = vectorSecret,
        _ overrides: (inout ProviderConfiguration) -> Void = { _ in }
    ) -> ProviderConfiguration {
        var provider = ProviderPresets.preset(
            named: "twitter",
            environment: [
                "TWITTER_CONSUMER_KEY": key, "TWITTER_CONSUMER_SECRET": secret,
            ])!
        overrides(&provider)
        return provider
    }

    /// A response the way Twitter labels its form-encoded token answers.
    static func form(_ body: String, status: Int = 200) -> UpstreamResponse {
        UpstreamResponse(status: status, headers: [("Content-Type", "text/html;charset=utf-8")], body: Array(body.utf8))
    }

    /// Twitter's `{"errors":[{"code":32,…}]}` 401.
    static let couldNotAuthenticate = UpstreamResponse(
        status: 401, headers: [("Content-Type", "application/json; charset=utf-8")],
        body: Array(#"{"errors":[{"code":32,"message":"Could not authenticate you."}]}"#.utf8))

    /// The decoded `Authorization: OAuth` parameters of `request`.
    static func oauthParameters(_ request: UpstreamRequest) -> [String: String] {
        let pairs = request.header("Authorization").flatMap(OAuth1Signer.parseAuthorizationHeader) ?? []
        return Dictionary(pairs, uniquingKeysWith: { first, _ in first })
    }

    /// Whether `request` carries a valid HMAC-SHA1 signature for `consumerSecret` and `tokenSecret`, recomputed from scratch.
    static func signatureIsValid(_ request: UpstreamRequest, consumerSecret: String, tokenSecret: String?) -> Bool {
        guard let pairs = request.header("Authorization").flatMap(OAuth1Signer.parseAuthorizationHeader),
            let sent = pairs.first(where: { $0.0 == "oauth_signature" })?.1
        else { return false }
        var parameters = pairs.filter { $0.0 != "oauth_signature" }
        if request.header("Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true {
            parameters += PercentEncoding.parseForm(String(decoding: request.body, as: UTF8.self)).map { ($0.name, $0.value) }
        }
        let base = OAuth1Signer.signatureBaseString(method: request.method, url: request.url, parameters: parameters)
        return OAuth1Signer.signature(baseString: base, consumerSecret: consumerSecret, tokenSecret: tokenSecret) == sent
    }

    @Test func requestTokenCallIsSignedLikeTwittersVector() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            "https://api.twitter.com/oauth/request_token",
            respond: Self.form(
                "oauth_token=8ldIZyxQeVrFZXFOZH5tAwj6vzJYuLQpl0WUEYtWc&oauth_token_secret=x6qpRnlEmW9JbQn4PQVVeVG8ZLPEx6A0TOebgwcuA&oauth_callback_confirmed=true"
            ))
        let client = OAuth1Client(
            settings: try OAuth1Settings(Self.twitter()), upstream: upstream,
            nonce: { "QP70eNmVz8jvdPevU3oJD2AfF7R7odC2XJcn4XlZJqk" }, timestamp: { 1_272_323_042 })
        let temporary = try await client.requestTemporaryCredentials(
            callback: "http://localhost:3005/the_dance/process_callback?service_provider_id=11")
        #expect(temporary.token == "8ldIZyxQeVrFZXFOZH5tAwj6vzJYuLQpl0WUEYtWc")
        #expect(temporary.secret.value == "x6qpRnlEmW9JbQn4PQVVeVG8ZLPEx6A0TOebgwcuA")
        let request = try #require(await upstream.requests.first)
        #expect(request.method == "POST")
        #expect(request.body.isEmpty)
        let oauth = Self.oauthParameters(request)
        #expect(oauth["oauth_signature"] == "8wUi7m5HFQy76nowoCThusfgB+Q=")
        #expect(oauth["oauth_callback"] == "http://localhost:3005/the_dance/process_callback?service_provider_id=11")
        #expect(oauth["oauth_consumer_key"] == Self.vectorKey)
        #expect(oauth["oauth_token"] == nil)
        #expect(oauth["oauth_version"] == "1.0")
    }

    @Test func accessTokenCallIsSignedLikeTwittersVectorAndReadsTheHTMLLabelledForm() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            "https://api.twitter.com/oauth/access_token",
            respond: Self.form(
                "oauth_token=6253282-eWudHldSbIaelX7swmsiHImEL4KinwaGloHANdrY&oauth_token_secret=2EEfA6BG5ly3sR3XjE0IBSnlQu4ZrUzPiYTmrkVU&user_id=6253282&screen_name=twitterapi"
            ))
        let client = OAuth1Client(
            settings: try OAuth1Settings(Self.twitter()), upstream: upstream,
            nonce: { "9zWH6qe0qG7Lc1telCn7FhUbLyVdjEaL3MO5uHxn8" }, timestamp: { 1_272_323_047 })
        let grant = try await client.requestTokenCredentials(
            requestToken: "8ldIZyxQeVrFZXFOZH5tAwj6vzJYuLQpl0WUEYtWc",
            requestTokenSecret: Secret("x6qpRnlEmW9JbQn4PQVVeVG8ZLPEx6A0TOebgwcuA"),
            verifier: "pDNg57prOHapMbhv25RNf75lVRd6JDsni1AJJIDYoTY")
        #expect(grant.accessToken.value == "6253282-eWudHldSbIaelX7swmsiHImEL4KinwaGloHANdrY")
        #expect(grant.tokenSecret?.value == "2EEfA6BG5ly3sR3XjE0IBSnlQu4ZrUzPiYTmrkVU")
        #expect(grant.uid == "6253282")
        #expect(grant.screenName == "twitterapi")
        #expect(grant.expiresIn == nil)
        let oauth = Self.oauthParameters(try #require(await upstream.requests.first))
        #expect(oauth["oauth_signature"] == "PUw/dHA4fnlJYM6RhXk5IU/0fCc=")
        #expect(oauth["oauth_verifier"] == "pDNg57prOHapMbhv25RNf75lVRd6JDsni1AJJIDYoTY")
        #expect(oauth["oauth_token"] == "8ldIZyxQeVrFZXFOZH5tAwj6vzJYuLQpl0WUEYtWc")
    }

    @Test(arguments: [
        "oauth_token=t&oauth_token_secret=s",
        "oauth_token=t&oauth_token_secret=s&oauth_callback_confirmed=false",
        "oauth_token=t&oauth_token_secret=s&oauth_callback_confirmed=TRUE",
    ])
    func anUnconfirmedCallbackAbortsTheFlow(body: String) async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://api.twitter.com/oauth/request_token", respond: Self.form(body))
        let client = OAuth1Client(settings: try OAuth1Settings(Self.twitter()), upstream: upstream, timestamp: { 1 })
        let thrown = await brokerError { try await client.requestTemporaryCredentials(callback: "https://broker.example/callback") }
        #expect(thrown == .upstreamError(step: "request_token", reason: "oauth_callback_confirmed is not true"))
    }

    @Test(arguments: [
        ("oauth_token_secret=s&oauth_callback_confirmed=true", "the response has no usable oauth_token"),
        ("oauth_token=t&oauth_callback_confirmed=true", "the response has no oauth_token_secret"),
        // A C1 control character (U+0085) is a control character like C0 and DEL.
        ("oauth_token=t%C2%85&oauth_token_secret=s&oauth_callback_confirmed=true", "the response has no usable oauth_token"),
    ])
    func aRequestTokenAnswerWithoutItsCredentialsIsRefused(body: String, reason: String) async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://api.twitter.com/oauth/request_token", respond: Self.form(body))
        let client = OAuth1Client(settings: try OAuth1Settings(Self.twitter()), upstream: upstream, timestamp: { 1 })
        let thrown = await brokerError { try await client.requestTemporaryCredentials(callback: "https://broker.example/callback") }
        #expect(thrown == .upstreamError(step: "request_token", reason: reason))
    }

    @Test func aRequestTokenSecretShapedLikeASealedValueIsRefusedBeforeTheFlowKeepsIt() async throws {
        let secret = "sealed:v1:Kd75W4OQfb2oJTV0vzGzeXftVAwgMnEK9MumzYcM"
        // Why: a flow store without a key writes the secret as it is, then reads it back as a sealed value and fails.
        let flow = PendingFlow(
            state: "s1234567890abcdef", provider: "twitter", binding: "api", requestToken: "t",
            requestTokenSecret: Secret(secret), createdAt: Date(timeIntervalSince1970: 0),
            expiresAt: Date(timeIntervalSince1970: 600))
        #expect(throws: StoreError.self) { try PendingFlowCodec.decode(try PendingFlowCodec.encode(flow), path: "flow.json") }

        let upstream = FakeUpstream()
        await upstream.on(
            "https://api.twitter.com/oauth/request_token",
            respond: Self.form("oauth_token=t&oauth_token_secret=\(secret)&oauth_callback_confirmed=true"))
        let client = OAuth1Client(settings: try OAuth1Settings(Self.twitter()), upstream: upstream, timestamp: { 1 })
        let thrown = await brokerError { try await client.requestTemporaryCredentials(callback: "https://broker.example/callback") }
        #expect(thrown == .upstreamError(step: "request_token", reason: "oauth_token_secret has the form of a sealed value"))
        #expect(thrown?.message.contains("Kd75W4") == false)
    }

    @Test(arguments: [
        (OAuth1ClientTests.couldNotAuthenticate, "HTTP 401 (not a 2xx status) with error code 32"),
        (
            UpstreamResponse(
                status: 401, headers: [("Content-Type", "text/plain")],
                body: Array("Error processing your OAuth request: Invalid oauth_verifier parameter".utf8)),
            "HTTP 401 (not a 2xx status)"
        ),
        (
            UpstreamResponse(
                status: 403, headers: [("Content-Type", "application/xml")],
                body: Array(
                    #"<?xml version="1.0" encoding="UTF-8"?><errors><error code="415">Callback URL not approved for this client application. Approved callback URLs can be adjusted in your application settings</error></errors>"#
                        .utf8)),
            "HTTP 403 (not a 2xx status) with error code 415"
        ),
        (
            UpstreamResponse(status: 401, body: Array("oauth_problem=signature_invalid&debug_sbs=POST%26x".utf8)),
            "HTTP 401 (not a 2xx status) with oauth_problem signature_invalid"
        ),
        (
            UpstreamResponse(
                status: 200, headers: [("Content-Type", "application/json")],
                body: Array(#"{"errors":[{"code":89,"message":"Invalid or expired token."}]}"#.utf8)),
            "HTTP 200 with error code 89"
        ),
        (
            UpstreamResponse(
                status: 200, headers: [("Content-Type", "text/html; charset=utf-8")],
                body: Array("<html><body>Over capacity</body></html>".utf8)),
            "the body is not form-encoded (text/html)"
        ),
        (UpstreamResponse(status: 200), "HTTP 200 with an empty body"),
    ])
    func twitterErrorsNameTheStepAndCodeButEchoNothing(response: UpstreamResponse, reason: String) async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://api.twitter.com/oauth/access_token", respond: response)
        let client = OAuth1Client(settings: try OAuth1Settings(Self.twitter()), upstream: upstream, timestamp: { 1 })
        let thrown = await brokerError {
            try await client.requestTokenCredentials(
                requestToken: "request-token", requestTokenSecret: Secret("request-secret-SENTINEL"),
                verifier: "verifier-SENTINEL")
        }
        #expect(thrown == .upstreamError(step: "access_token", reason: reason))
        for echoed in ["Invalid", "Callback URL", "SENTINEL", "debug_sbs", "Over capacity", Self.vectorSecret] {
            #expect(thrown?.message.contains(echoed) == false)
        }
    }

    @Test func aTimeoutIsReportedForTheStep() async throws {
        let upstream = FakeUpstream()
        await upstream.on("https://api.twitter.com/oauth/request_token", fail: .timeout)
        let client = OAuth1Client(settings: try OAuth1Settings(Self.twitter()), upstream: upstream, timestamp: { 1 })
        let thrown = await brokerError { try await client.requestTemporaryCredentials(callback: "https://broker.example/callback") }
        #expect(thrown == .upstreamTimeout(step: "request_token"))
    }

    @Test func authorizeURLCarriesOnlyTheTokenAndCanBeSwitchedToAuthenticate() throws {
        let upstream = FakeUpstream()
        let plain = OAuth1Client(settings: try OAuth1Settings(Self.twitter()), upstream: upstream, timestamp: { 1 })
        #expect(
            plain.authorizeURL(requestToken: "Z6eEdO8MOmk394Woz") == "https://api.twitter.com/oauth/authorize?oauth_token=Z6eEdO8MOmk394Woz"
        )
        let signIn = OAuth1Client(
            settings: try OAuth1Settings(Self.twitter { $0.authenticateURL = "https://api.twitter.com/oauth/authenticate" }),
            upstream: upstream, timestamp: { 1 })
        #expect(signIn.authorizeURL(requestToken: "a b+c") == "https://api.twitter.com/oauth/authenticate?oauth_token=a%20b%2Bc")
    }

    @Test func verifyCredentialsIsASignedGETWithItsQueryAndPrefersIDStr() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            "https://api.twitter.com/1.1/account/verify_credentials.json",
            respond: UpstreamResponse(
                status: 200, headers: [("Content-Type", "application/json;charset=utf-8")],
                body: Array(#"{"id":9007199254740993,"id_str":"9007199254740993","name":"Sean Cook","screen_name":"theSeanCook"}"#.utf8)))
        let client = OAuth1Client(settings: try OAuth1Settings(Self.twitter()), upstream: upstream, timestamp: { 1_318_622_958 })
        let user = try await client.fetchUser(
            token: Secret("370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb"),
            tokenSecret: Secret("LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE"))
        #expect(user.uid == "9007199254740993")
        #expect(user.screenName == "theSeanCook")
        let request = try #require(await upstream.requests.first)
        #expect(request.method == "GET")
        #expect(request.url.hasSuffix("?include_entities=false&skip_status=true"))
        #expect(Self.signatureIsValid(request, consumerSecret: Self.vectorSecret, tokenSecret: "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE"))
        #expect(!Self.signatureIsValid(request, consumerSecret: Self.vectorSecret, tokenSecret: "another-secret"))
        #expect(Self.oauthParameters(request)["oauth_token"] == "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb")
    }

    @Test func everyRequestGetsAFreshNonce() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            "https://api.twitter.com/oauth/request_token",
            respond: Self.form("oauth_token=t&oauth_token_secret=s&oauth_callback_confirmed=true"))
        let client = OAuth1Client(settings: try OAuth1Settings(Self.twitter()), upstream: upstream, timestamp: { 1 })
        for _ in 0..<3 { _ = try await client.requestTemporaryCredentials(callback: "https://broker.example/callback") }
        let nonces = await upstream.requests.compactMap { Self.oauthParameters($0)["oauth_nonce"] }
        #expect(nonces.count == 3)
        #expect(Set(nonces).count == 3)
        #expect(nonces.allSatisfy { $0.count == 40 })
    }
}
