import BrokerCore
import BrokerTestSupport
import Testing

/// How ``ProxyOutbound`` places an account's credential on the request to the provider, one test per placement.
struct ProxyCredentialTests {
    typealias Field = ProxyHeaders.Field

    static let caller: [Field] = [
        ("Accept", "application/json"), ("Authorization", "Bearer broker-api-key"), ("Broker-Account", "acme:1"),
        ("Cookie", "sid=1"),
    ]

    static func make(
        _ base: String, method: String = "GET", path: String, query: String? = nil, headers: [Field] = caller,
        credential: ProxyCredential, placement: ProxyCredentialPlacement, body: [UInt8]? = nil,
        makeSigner: (OAuth1Credentials) -> OAuth1Signer = { OAuth1Signer(credentials: $0) }
    ) throws -> ProxyOutbound.Request {
        try ProxyOutbound.make(
            method: method, base: ProxyTarget.Base(base), path: path, query: query, callerHeaders: headers,
            credential: credential, placement: placement, body: body, makeSigner: makeSigner)
    }

    static func values(_ request: ProxyOutbound.Request, _ name: String) -> [String] {
        request.headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    @Test func oauth2SendsTheAccountsTokenAsBearerInPlaceOfTheCallersAuthorization() throws {
        let request = try Self.make(
            "https://api.github.com", path: "/user/repos", query: "per_page=100",
            credential: ProxyCredential(accessToken: Secret("gho_account")), placement: .init())
        #expect(request.url == "https://api.github.com/user/repos?per_page=100")
        #expect(request.headers.map(\.name) == ["Accept", "Authorization"])
        #expect(Self.values(request, "Authorization") == ["Bearer gho_account"])
    }

    @Test func twitchHelixAddsTheClientIdAndReplacesACallersOwn() throws {
        var twitch = try #require(ProviderPresets.preset(named: "twitch", environment: ["TWITCH_CLIENT_ID": "cid-7"]))
        twitch.clientSecret = Secret("s")
        let placement = ProxyCredentialPlacement(provider: twitch)
        #expect(placement == ProxyCredentialPlacement(token: .bearer, clientIDHeader: "Client-Id"))
        let request = try Self.make(
            try #require(twitch.apiBaseURL), path: "/users", headers: Self.caller + [("client-id", "caller-chosen")],
            credential: ProxyCredential(accessToken: Secret("twitch-user-token"), clientID: twitch.clientID), placement: placement)
        #expect(request.url == "https://api.twitch.tv/helix/users")
        #expect(request.headers.map(\.name) == ["Accept", "Client-Id", "Authorization"])
        #expect(Self.values(request, "Client-Id") == ["cid-7"])
        #expect(Self.values(request, "Authorization") == ["Bearer twitch-user-token"])
    }

    @Test func notionAndRedditAddTheFieldsTheirAPIsRequire() throws {
        let notion = try #require(ProviderPresets.preset(named: "notion", environment: [:]))
        let request = try Self.make(
            try #require(notion.apiBaseURL), method: "POST", path: "/search",
            headers: Self.caller + [("Notion-Version", "2021-05-13")],
            credential: ProxyCredential(accessToken: Secret("ntn_token")), placement: ProxyCredentialPlacement(provider: notion))
        #expect(request.url == "https://api.notion.com/v1/search")
        #expect(Self.values(request, "Notion-Version") == ["2025-09-03"])
        let reddit = try #require(ProviderPresets.preset(named: "reddit", environment: [:]))
        let me = try Self.make(
            try #require(reddit.apiBaseURL), path: "/api/v1/me", headers: [("User-Agent", "curl/8")],
            credential: ProxyCredential(accessToken: Secret("rt")), placement: ProxyCredentialPlacement(provider: reddit))
        #expect(me.url == "https://oauth.reddit.com/api/v1/me")
        #expect(Self.values(me, "user-agent") == ["web:token-broker:1.0 (OAuth token broker)"])
    }

    @Test func aQueryParameterPlacementEncodesTheTokenAndRefusesACallerNamingIt() throws {
        let weibo = try #require(ProviderPresets.preset(named: "weibo", environment: [:]))
        let placement = ProxyCredentialPlacement(provider: weibo)
        #expect(placement.token == .queryParameter("access_token"))
        let credential = ProxyCredential(accessToken: Secret("2.00a+b/c="))
        let request = try Self.make(
            try #require(weibo.apiBaseURL), path: "/users/show.json", query: "uid=1", credential: credential, placement: placement)
        #expect(request.url == "https://api.weibo.com/2/users/show.json?uid=1&access_token=2.00a%2Bb%2Fc%3D")
        #expect(Self.values(request, "Authorization").isEmpty)
        #expect(throws: ProxyOutbound.Failure.refused(reason: "the query names a parameter the broker sets")) {
            try Self.make("https://api.weibo.com/2", path: "/x", query: "access%5Ftoken=mine", credential: credential, placement: placement)
        }
    }

    @Test func tmdbNamesTheSessionAndTheV3KeyInTheQuery() throws {
        let request = try Self.make(
            "https://api.themoviedb.org/3", path: "/account", query: "language=en",
            credential: ProxyCredential(accessToken: Secret("session-1"), apiKey: Secret("0123456789abcdef0123456789abcdef")),
            placement: .init(token: .tmdbSession))
        let query = "language=en&api_key=0123456789abcdef0123456789abcdef&session_id=session-1"
        #expect(request.url == "https://api.themoviedb.org/3/account?" + query)
        #expect(Self.values(request, "Authorization").isEmpty)
        #expect(throws: ProxyOutbound.Failure.refused(reason: "the query names a parameter the broker sets")) {
            try Self.make(
                "https://api.themoviedb.org/3", path: "/account", query: "session_id=other",
                credential: ProxyCredential(accessToken: Secret("session-1"), apiKey: Secret("k")), placement: .init(token: .tmdbSession))
        }
    }

    @Test func tmdbSendsAReadAccessTokenAsBearerAndTheSessionInTheQuery() throws {
        let readToken = "eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJ4In0.c2lnbmF0dXJl"
        let request = try Self.make(
            "https://api.themoviedb.org/3", path: "/account",
            credential: ProxyCredential(accessToken: Secret("session-1"), apiKey: Secret(readToken)),
            placement: .init(token: .tmdbSession))
        #expect(request.url == "https://api.themoviedb.org/3/account?session_id=session-1")
        #expect(Self.values(request, "Authorization") == ["Bearer " + readToken])
    }

    static let twitterNonce = "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg"

    /// Twitter's "Creating a signature" example (developer.twitter.com, OAuth 1.0a), sent through the proxy: the query
    /// and the form body are signed, and the header carries the signature Twitter publishes.
    @Test func oauth1SignsMethodURLQueryAndFormBodyToTwittersPublishedSignature() throws {
        let credential = ProxyCredential(
            accessToken: Secret("370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb"),
            tokenSecret: Secret("LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE"), clientID: "xvz1evFS4wEEPTGEFPHBog",
            clientSecret: Secret("kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw"))
        let body = Array("status=Hello%20Ladies%20%2b%20Gentlemen%2c%20a%20signed%20OAuth%20request%21".utf8)
        let request = try Self.make(
            "https://api.twitter.com", method: "POST", path: "/1.1/statuses/update.json", query: "include_entities=true",
            headers: Self.caller + [("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")],
            credential: credential, placement: .init(token: .oauth1Signature), body: body,
            makeSigner: { OAuth1Signer(credentials: $0, nonce: { Self.twitterNonce }, timestamp: { 1_318_622_958 }) })
        #expect(request.url == "https://api.twitter.com/1.1/statuses/update.json?include_entities=true")
        #expect(
            Self.values(request, "Authorization") == [
                #"OAuth oauth_consumer_key="xvz1evFS4wEEPTGEFPHBog", oauth_nonce="kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", "#
                    + #"oauth_signature="hCtSmYh%2BiHYCEqBWrE7C7hYmtUk%3D", oauth_signature_method="HMAC-SHA1", "#
                    + #"oauth_timestamp="1318622958", oauth_token="370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb", "#
                    + #"oauth_version="1.0""#
            ])
        #expect(request.headers.map(\.name) == ["Accept", "Content-Type", "Authorization"])
    }

    @Test func oauth1LeavesAJSONBodyUnsignedAndRefusesAFormBodyItCannotRead() throws {
        let credential = ProxyCredential(
            accessToken: Secret("t"), tokenSecret: Secret("ts"), clientID: "ck", clientSecret: Secret("cs"))
        let fixed: (OAuth1Credentials) -> OAuth1Signer = { OAuth1Signer(credentials: $0, nonce: { "n" }, timestamp: { 1 }) }
        let json = try Self.make(
            "https://api.twitter.com", method: "POST", path: "/2/tweets", headers: [("Content-Type", "application/json")],
            credential: credential, placement: .init(token: .oauth1Signature), body: Array(#"{"text":"a=b"}"#.utf8), makeSigner: fixed)
        let unsigned = fixed(OAuth1Credentials(consumerKey: "ck", consumerSecret: "cs", token: "t", tokenSecret: "ts"))
            .authorizationHeader(method: "POST", url: "https://api.twitter.com/2/tweets")
        #expect(Self.values(json, "Authorization") == [unsigned])
        let form: [Field] = [("Content-Type", "application/x-www-form-urlencoded")]
        for (query, body) in [("oauth_token=other", [UInt8]()), ("a=1", Array("oauth_signature=x".utf8))] {
            #expect(throws: ProxyOutbound.Failure.refused(reason: "the request names a parameter the broker sets")) {
                try Self.make(
                    "https://api.twitter.com", method: "POST", path: "/1.1/x.json", query: query, headers: form,
                    credential: credential, placement: .init(token: .oauth1Signature), body: body, makeSigner: fixed)
            }
        }
        for body: [UInt8]? in [nil, Array("a=%zz".utf8), Array("a=caf\u{e9}".utf8), [UInt8](repeating: 0x61, count: (1 << 20) + 1)] {
            #expect(throws: ProxyOutbound.Failure.self) {
                try Self.make(
                    "https://api.twitter.com", method: "POST", path: "/1.1/x.json", headers: form, credential: credential,
                    placement: .init(token: .oauth1Signature), body: body, makeSigner: fixed)
            }
        }
    }

    @Test func aCredentialOrConfigurationThatCannotBeSentIsRefusedWithoutRepeatingIt() throws {
        let unusable: [(ProxyCredential, ProxyCredentialPlacement)] = [
            (ProxyCredential(accessToken: Secret("sekrit\r\nX-Evil: 1")), .init()),
            (ProxyCredential(accessToken: Secret("")), .init()),
            (ProxyCredential(accessToken: Secret("t")), .init(token: .oauth1Signature)),
            (ProxyCredential(accessToken: Secret("t"), clientID: "ck", clientSecret: Secret("cs")), .init(token: .oauth1Signature)),
            (ProxyCredential(accessToken: Secret("t")), .init(token: .tmdbSession)),
            (ProxyCredential(accessToken: Secret("t")), .init(clientIDHeader: "Client-Id")),
            (ProxyCredential(accessToken: Secret("t"), clientID: "c"), .init(clientIDHeader: "Authorization")),
            (ProxyCredential(accessToken: Secret("t")), .init(headers: [("Host", "evil.example")])),
            (ProxyCredential(accessToken: Secret("t")), .init(headers: [("X-Bad", "a\nb")])),
        ]
        for (credential, placement) in unusable {
            do {
                _ = try Self.make("https://api.example.com", path: "/x", credential: credential, placement: placement)
                Issue.record("made a request for \(placement)")
            } catch {
                guard case .unusable(let reason)? = error as? ProxyOutbound.Failure else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(!reason.contains("sekrit") && !reason.contains("evil"))
            }
        }
    }

    @Test func theCallersMethodAndPathAreCheckedBeforeAnythingGoesOut() throws {
        let credential = ProxyCredential(accessToken: Secret("t"))
        #expect(throws: ProxyOutbound.Failure.refused(reason: "the method is not an HTTP token")) {
            try Self.make("https://api.example.com", method: "GET /x", path: "/x", credential: credential, placement: .init())
        }
        #expect(throws: ProxyOutbound.Failure.self) {
            try Self.make("https://api.example.com/v1", path: "/../admin", credential: credential, placement: .init())
        }
    }

    @Test func anAccountsCredentialIsItsTokensWithTheProvidersClientCredentials() throws {
        var twitter = try #require(ProviderPresets.preset(named: "twitter", environment: [:]))
        twitter.clientID = "consumer-key"
        twitter.clientSecret = Secret("consumer-secret")
        let credential = ProxyCredential(account: Account.makeFull(), provider: twitter)
        #expect(credential.accessToken.value == "access-SENTINEL-1" && credential.tokenSecret?.value == "secret-SENTINEL-3")
        #expect(credential.clientID == "consumer-key" && credential.clientSecret?.value == "consumer-secret")
        #expect(Set(credential.secretValues) == ["access-SENTINEL-1", "secret-SENTINEL-3", "consumer-secret"])
        #expect(!"\(credential)".contains("SENTINEL") && !"\(credential)".contains("consumer-secret"))
    }
}
