import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// `/proxy/<path>` end to end for the credentials that are not a Bearer token: an RFC 5849 signature the fake Twitter
/// verifies (its consumer secret and the token secret it issued, over what it received), and TMDB's `session_id` and
/// `api_key` in the query, which the fake TMDB checks against its live sessions.
@Suite(.scoped) struct ProxyCredentialKindsTests {
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    struct Setup {
        let broker: BrokerHarness
        let account: String

        func call(_ method: String = "GET", _ target: String, headers: [(String, String)] = [], body: String = "") async throws
            -> TestHTTP.Reply
        {
            try #require(
                await TestHTTP.send(
                    port: broker.port, method: method, target: target,
                    headers: ProxyCredentialKindsTests.api + [("Broker-Account", account)] + headers, body: body))
        }

        /// The stored credential's string field `name`, read back with the API key.
        func stored(_ name: String) async throws -> String {
            let reply = try #require(
                await TestHTTP.send(port: broker.port, target: "/account?id=\(account)", headers: ProxyCredentialKindsTests.api))
            return try #require(TwitterEndToEndTests.field(reply.body, name))
        }

        /// Fails when a response field or the broker's log shows any of `secrets`.
        func expectNothingLeaked(_ replies: [TestHTTP.Reply], _ secrets: [String]) {
            for secret in secrets {
                for reply in replies {
                    #expect(!reply.headers.contains { $0.0.contains(secret) || $0.1.contains(secret) }, "a response field shows a secret")
                }
                #expect(!broker.log.contains(secret), "the broker's log shows a secret")
            }
        }
    }

    // MARK: OAuth 1.0a (Twitter)

    /// A fake Twitter whose API the broker may proxy to, and one connected account.
    static func twitter() async throws -> (FakeTwitterProvider, Setup) {
        let twitter = try FakeTwitterProvider.scoped(consumerSecret: TwitterEndToEndTests.consumerSecret)
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(twitter.providerEntry(api: true))}}",
            environment: [
                "TWITTER_CONSUMER_KEY": FakeTwitterProvider.consumerKey,
                "TWITTER_CONSUMER_SECRET": TwitterEndToEndTests.consumerSecret,
            ])
        #expect(await Browser(brokerPort: broker.port, providerPort: twitter.port).connect(provider: "twitter")?.status == 200)
        return (twitter, Setup(broker: broker, account: TwitterEndToEndTests.accountID))
    }

    /// The `[name, value]` pairs of the echo's `parameters`: what the fake verified the signature over.
    static func signedParameters(_ body: String) -> [[String]] {
        guard let data = body.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return []
        }
        return object["parameters"] as? [[String]] ?? []
    }

    @Test func aSignedGetWithAQueryVerifiesAtTheProvider() async throws {
        let (twitter, s) = try await Self.twitter()
        let before = twitter.state.signatureFailures
        // `+` is a space and `%2B` a plus (RFC 5849 §3.4.1.3.1 decodes the query as a form); a name without `=` counts.
        let reply = try await s.call("GET", "/proxy/1.1/echo/search/tweets.json?q=from%3Atwitterapi+a%2Bb&count=2&count=10&flag")
        #expect(reply.status == 200, "\(reply.body)")
        #expect(reply.body.contains(#""method":"GET""#))
        #expect(reply.body.contains(#""base_uri":"http://127.0.0.1:\#(twitter.port)/1.1/echo/search/tweets.json""#))
        #expect(reply.body.contains(#""user_id":"\#(FakeTwitterProvider.userID)""#))
        #expect(Self.signedParameters(reply.body) == [["q", "from:twitterapi a+b"], ["count", "2"], ["count", "10"], ["flag", ""]])
        #expect(twitter.state.apiVerified == 1)
        #expect(twitter.state.signatureFailures == before)
        s.expectNothingLeaked(
            [reply], [try await s.stored("access_token"), try await s.stored("token_secret"), TwitterEndToEndTests.consumerSecret])
    }

    @Test func aSignedPostWithAFormBodyVerifiesAtTheProvider() async throws {
        let (twitter, s) = try await Self.twitter()
        let reply = try await s.call(
            "POST", "/proxy/1.1/echo/statuses/update.json?include_entities=true",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: "status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21&lang=en+GB")
        #expect(reply.status == 200, "\(reply.body)")
        #expect(reply.body.contains(#""method":"POST""#))
        #expect(
            Self.signedParameters(reply.body) == [
                ["include_entities", "true"], ["status", "Hello Ladies + Gentlemen, a signed OAuth request!"], ["lang", "en GB"],
            ])
        #expect(twitter.state.apiVerified == 1)
        // A body that is not a form is sent as it is and not signed; the provider verifies the call all the same.
        let json = try await s.call(
            "POST", "/proxy/1.1/echo/json", headers: [("Content-Type", "application/json")], body: #"{"status":"a=b&c"}"#)
        #expect(json.status == 200 && Self.signedParameters(json.body).isEmpty, "\(json.body)")
        #expect(twitter.state.apiVerified == 2)
        s.expectNothingLeaked(
            [reply, json], [try await s.stored("access_token"), try await s.stored("token_secret"), TwitterEndToEndTests.consumerSecret])
    }

    @Test func aSignatureTheProviderCannotVerifyIsItsOwn401() async throws {
        // The broker signs with a consumer secret the provider does not know: the provider's refusal comes back as it is.
        let (twitter, s) = try await Self.twitter()
        // The second broker reads the same stored account, so only the consumer secret differs.
        await s.broker.stop()
        let wrong = try BrokerHarness(
            providersJSON: "{\"providers\": {\(twitter.providerEntry(api: true))}}",
            environment: [
                "TWITTER_CONSUMER_KEY": FakeTwitterProvider.consumerKey,
                "TWITTER_CONSUMER_SECRET": "not-the-consumer-secret",
            ], dataDirectory: s.broker.dataDirectory)
        let reply = try #require(
            await TestHTTP.send(
                port: wrong.port, target: "/proxy/1.1/echo/x", headers: Self.api + [("Broker-Account", s.account)]))
        #expect(reply.status == 401 && reply.body.contains(#""code":32"#), "\(reply.status) \(reply.body)")
        #expect(twitter.state.apiCalls == 1 && twitter.state.apiVerified == 0)
        // OAuth 1.0a tokens are not refreshed: the refusal is neither retried nor marked refreshed, and the account
        // stays usable.
        #expect(reply.header("Broker-Refreshed") == nil)
        let account = try #require(
            await TestHTTP.send(port: wrong.port, target: "/account?id=\(s.account)", headers: Self.api))
        #expect(account.status == 200 && !account.body.contains("reauthorization_required"), "\(account.body)")
    }

    @Test(arguments: [
        "/proxy/1.1/echo/x?oauth_token=mine", "/proxy/1.1/echo/x?a=1&oauth_signature=forged", "/proxy/1.1/echo/x?oauth_nonce",
        "/proxy/1.1/echo/x?oauth%5Ftoken=mine",
    ])
    func aCallersOAuthQueryParameterIs400WithoutACall(target: String) async throws {
        let (twitter, s) = try await Self.twitter()
        let reply = try await s.call("GET", target)
        #expect(reply.status == 400, "\(target): \(reply.status) \(reply.body)")
        #expect(twitter.state.apiCalls == 0)
    }

    @Test func aCallersOAuthFormParameterIs400WithoutACall() async throws {
        let (twitter, s) = try await Self.twitter()
        let reply = try await s.call(
            "POST", "/proxy/1.1/echo/x", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: "status=hi&oauth_callback=https%3A%2F%2Fevil.example%2F")
        #expect(reply.status == 400, "\(reply.status) \(reply.body)")
        #expect(twitter.state.apiCalls == 0)
    }

    // MARK: TMDB

    /// A fake TMDB whose API the broker may proxy to, and one connected account.
    static func tmdb(key: String = TMDBEndToEndTests.apiKey) async throws -> (FakeTMDBProvider, Setup) {
        let tmdb = try FakeTMDBProvider.scoped(apiKey: key)
        let entry =
            #""tmdb": {"api_base_url": "\#(tmdb.baseURL)/3", "authenticate_url": "\#(tmdb.baseURL)/authenticate", "api_allow_private": true}"#
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(entry)}}", environment: ["TMDB_API_KEY": key])
        #expect(await Browser(brokerPort: broker.port, providerPort: tmdb.port).connect(provider: "tmdb")?.status == 200)
        return (tmdb, Setup(broker: broker, account: TMDBEndToEndTests.accountID))
    }

    @Test func aCallCarriesTheLiveSessionAndTheKey() async throws {
        let (tmdb, s) = try await Self.tmdb()
        let before = tmdb.state
        let reply = try await s.call("GET", "/proxy/account?language=en-US")
        #expect(reply.status == 200, "\(reply.body)")
        #expect(reply.body.contains(#""id":\#(FakeTMDBProvider.accountID)"#) && reply.body.contains(#""username":"travisbell""#))
        #expect(tmdb.state.accountCalls == before.accountCalls + 1)
        #expect(tmdb.state.apiKeyCalls == before.apiKeyCalls + 1)
        s.expectNothingLeaked([reply], [try await s.stored("access_token"), TMDBEndToEndTests.apiKey])
    }

    @Test func anAPIReadAccessTokenGoesAsBearerAndTheSessionInTheQuery() async throws {
        let (tmdb, s) = try await Self.tmdb(key: TMDBEndToEndTests.readAccessToken)
        let before = tmdb.state
        let reply = try await s.call("GET", "/proxy/account")
        #expect(reply.status == 200, "\(reply.body)")
        #expect(tmdb.state.bearerCalls == before.bearerCalls + 1 && tmdb.state.apiKeyCalls == before.apiKeyCalls)
        #expect(tmdb.state.accountCalls == before.accountCalls + 1)
        s.expectNothingLeaked([reply], [try await s.stored("access_token"), TMDBEndToEndTests.readAccessToken])
        // The query's api_key is still the broker's to set: a caller's own is refused without a call.
        let own = try await s.call("GET", "/proxy/account?api_key=mine")
        #expect(own.status == 400)
        #expect(tmdb.state.accountCalls == before.accountCalls + 1)
    }

    @Test(arguments: [
        "/proxy/account?session_id=mine", "/proxy/account?api_key=mine", "/proxy/account?x=1&session_id",
        "/proxy/account?session%5Fid=mine",
    ])
    func theCallersOwnSessionOrKeyIs400WithoutACall(target: String) async throws {
        let (tmdb, s) = try await Self.tmdb()
        let before = tmdb.state.accountCalls
        let reply = try await s.call("GET", target)
        #expect(reply.status == 400, "\(target): \(reply.status) \(reply.body)")
        #expect(tmdb.state.accountCalls == before)
    }
}
