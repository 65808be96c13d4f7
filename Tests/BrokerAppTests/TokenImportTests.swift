import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// `POST /accounts` with OAuth tokens from another system: a refresh token is used once before anything is stored, so
/// a dead grant is `422` with nothing stored; the uid comes from the provider's user endpoint unless given; `dry_run`
/// stores nothing. The fake OAuth 2.0 provider issues the tokens as if the users had signed in elsewhere.
@Suite(.scoped) struct TokenImportTests {
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Content-Type", "application/json")]

    struct Setup {
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness

        func post(_ body: String) async throws -> TestHTTP.Reply {
            try #require(
                await TestHTTP.send(port: broker.port, method: "POST", target: "/accounts", headers: TokenImportTests.api, body: body))
        }

        func get(_ target: String) async throws -> TestHTTP.Reply {
            try #require(await TestHTTP.send(port: broker.port, target: target, headers: TokenImportTests.api))
        }
    }

    static func setUp() throws -> Setup {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: RefreshEndToEndTests.clientSecret))
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry())}}",
            environment: ["FAKE_ACME_SECRET": RefreshEndToEndTests.clientSecret, "BROKER_REFRESH_INTERVAL": "0"])
        return Setup(provider: provider, broker: broker)
    }

    static func json(_ body: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }

    @Test func aRefreshTokenIsUsedOnceAndTheUserNamedByTheProvider() async throws {
        let s = try Self.setUp()
        let grant = s.provider.grantWithoutFlow(uid: "7001")
        let refresh = try #require(grant.refreshToken)
        let imported = try await s.post(
            #"{"provider":"acme","access_token":"\#(grant.accessToken)","refresh_token":"\#(refresh)","end_user_id":"u-1","tags":{"from":"vendor"}}"#
        )
        #expect(imported.status == 201, "\(imported.body)")
        #expect(Self.json(imported.body)["id"] as? String == "acme:7001")
        #expect(s.provider.refreshCalls == 1)
        #expect(!imported.body.contains(grant.accessToken) && !imported.body.contains(refresh))
        let account = Self.json(try await s.get("/account?id=acme:7001").body)
        #expect(account["access_token"] as? String != grant.accessToken, "the stored token is the refreshed one")
        #expect(account["end_user_id"] as? String == "u-1" && (account["tags"] as? [String: String]) == ["from": "vendor"])
        #expect(!s.broker.log.contains(refresh) && !s.broker.log.contains(grant.accessToken))
    }

    /// An OAuth provider whose endpoints sit at each account's subdomain (`http://{subdomain}.localhost:PORT/…`; every
    /// name under `localhost` is the loopback address, RFC 6761 §6.3): the import's settings fill the token URL before
    /// the one refresh, are kept with the account, and fill it again on the next refresh; an unfit one calls nothing.
    @Test func settingsFillTheTokenURLOfTheImportAndOfLaterRefreshes() async throws {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: RefreshEndToEndTests.clientSecret))
        let settings = #""settings": [{"name": "subdomain", "description": "Your subdomain"}]"#
        let clock = TestClock()
        let entry = provider.providerEntry(extra: settings).replacingOccurrences(
            of: "http://127.0.0.1:", with: "http://{subdomain}.localhost:")
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(entry)}}",
            environment: ["FAKE_ACME_SECRET": RefreshEndToEndTests.clientSecret, "BROKER_REFRESH_INTERVAL": "0"], now: clock.function)
        let s = Setup(provider: provider, broker: broker)
        let grant = provider.grantWithoutFlow(uid: "7101")
        let refresh = try #require(grant.refreshToken)
        let refused = try await s.post(
            #"{"provider":"acme","access_token":"\#(grant.accessToken)","refresh_token":"\#(refresh)","settings":{"subdomain":"acme.evil.com"}}"#
        )
        #expect(refused.status == 400 && refused.body.contains("invalid_setting"), "\(refused.body)")
        let missing = try await s.post(#"{"provider":"acme","access_token":"\#(grant.accessToken)","refresh_token":"\#(refresh)"}"#)
        #expect(missing.status == 400 && missing.body.contains(#"\"subdomain\" is required"#), "\(missing.body)")
        #expect(provider.refreshCalls == 0)
        let imported = try await s.post(
            #"{"provider":"acme","access_token":"\#(grant.accessToken)","refresh_token":"\#(refresh)","settings":{"subdomain":"acme"}}"#)
        #expect(imported.status == 201, "\(imported.body)")
        #expect(provider.refreshCalls == 1)
        let account = Self.json(try await s.get("/account?id=acme:7101").body)
        #expect(account["settings"] as? [String: String] == ["subdomain": "acme"])
        // Past the 10 s in which a forced refresh reuses the last one's token.
        clock.advance(11)
        let again = try #require(
            await TestHTTP.send(port: broker.port, method: "POST", target: "/account/refresh?id=acme:7101", headers: Self.api))
        #expect(again.status == 200, "\(again.body)")
        #expect(provider.refreshCalls == 2)
        // Deleting it revokes at the account's own host too: 204, not a revocation failure.
        let deleted = try #require(
            await TestHTTP.send(port: broker.port, method: "DELETE", target: "/account?id=acme:7101", headers: Self.api))
        #expect(deleted.status == 204, "\(deleted.body)")
        #expect(provider.revokeCalls == 1)
    }

    @Test func aDeadRefreshTokenIs422AndNothingIsStored() async throws {
        let s = try Self.setUp()
        let grant = s.provider.grantWithoutFlow(uid: "7002")
        let refused = try await s.post(
            #"{"provider":"acme","access_token":"\#(grant.accessToken)","refresh_token":"not-a-refresh-token","uid":"7002"}"#)
        #expect(refused.status == 422 && refused.body.contains("credential_invalid"), "\(refused.body)")
        #expect(try await s.get("/accounts").body.contains(#""accounts":[]"#))
    }

    @Test func aDryRunChecksEverythingAndStoresNothing() async throws {
        let s = try Self.setUp()
        let grant = s.provider.grantWithoutFlow(uid: "7003")
        let checked = try await s.post(#"{"provider":"acme","access_token":"\#(grant.accessToken)","dry_run":true}"#)
        #expect(checked.status == 200 && Self.json(checked.body)["id"] as? String == "acme:7003", "\(checked.body)")
        #expect(try await s.get("/accounts").body.contains(#""accounts":[]"#))
    }

    @Test func anAccessTokenAloneWithAUidIsStoredAsGiven() async throws {
        let s = try Self.setUp()
        let expires = "2031-01-02T03:04:05Z"
        let imported = try await s.post(
            #"{"provider":"acme","access_token":"OLD-SYSTEM-TOKEN-1","uid":"legacy-9","expires_at":"\#(expires)","scope":"repo"}"#)
        #expect(imported.status == 201, "\(imported.body)")
        let account = Self.json(try await s.get("/account?id=acme:legacy-9").body)
        #expect(account["access_token"] as? String == "OLD-SYSTEM-TOKEN-1" && account["scope"] as? String == "repo")
        #expect((account["expires_at"] as? String)?.hasPrefix("2031-01-02T03:04:05") == true)
        #expect(s.provider.refreshCalls == 0)
    }

    @Test func aFileOfAThousandTokensStoresTheLiveOnesAndReportsTheDeadOnesByLine() async throws {
        let s = try Self.setUp()
        let dead: Set<Int> = [3, 500, 998]
        var lines: [String] = []
        for number in 1...1000 {
            let grant = s.provider.grantWithoutFlow(uid: "u\(number)")
            let refresh = dead.contains(number) ? "dead-refresh-token-\(number)" : try #require(grant.refreshToken)
            lines.append(#"{"provider":"acme","uid":"u\#(number)","access_token":"\#(grant.accessToken)","refresh_token":"\#(refresh)"}"#)
        }
        // A blank line is skipped, and its number still counts.
        lines.insert("", at: 10)
        let path = try TemporaryDirectory.scoped(prefix: "import") + "/tokens.jsonl"
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        let outcome = await AccountsClient.run(
            AccountsCommand(.importFile(path)),
            environment: ["BROKER_URL": "http://127.0.0.1:\(s.broker.port)", "BROKER_API_KEY": BrokerHarness.apiKey])
        #expect(outcome.status == 1 && outcome.failure?.reason == "3 of 1000 lines were not imported")
        let report = outcome.output.split(separator: "\n").map(String.init)
        #expect(report.last == "997 stored, 3 failed")
        // File lines after the blank one are one further on.
        let failedLines = report.filter { $0.contains("credential_invalid") }.compactMap { $0.split(separator: ":").first.map(String.init) }
        #expect(failedLines == ["line 3", "line 501", "line 999"])
        #expect(report.contains("line 12: stored acme:u11"))
        let listing = try await s.get("/accounts?provider=acme&limit=1000")
        #expect((Self.json(listing.body)["accounts"] as? [Any])?.count == 997)
        #expect(!outcome.output.contains("dead-refresh-token") && !s.broker.log.contains("dead-refresh-token"))
    }

    @Test func tokensOfAnOAuth1ProviderAreNotImported() async throws {
        let twitter = try FakeTwitterProvider.scoped(consumerSecret: TwitterEndToEndTests.consumerSecret)
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(twitter.providerEntry(api: true))}}",
            environment: [
                "TWITTER_CONSUMER_KEY": FakeTwitterProvider.consumerKey, "TWITTER_CONSUMER_SECRET": TwitterEndToEndTests.consumerSecret,
            ])
        let reply = try #require(
            await TestHTTP.send(
                port: broker.port, method: "POST", target: "/accounts", headers: Self.api,
                body: #"{"provider":"twitter","access_token":"t","uid":"1"}"#))
        #expect(reply.status == 400 && reply.body.contains("cannot be imported"), "\(reply.body)")
    }

    @Test(arguments: [
        (#"{"provider":"acme","access_token":"t","credentials":{}}"#, #"Unknown field \"credentials\""#),
        (#"{"provider":"acme"}"#, "import its tokens with access_token"),
        (#"{"provider":"acme","access_token":"t","uid":"u","expires_at":"tomorrow"}"#, "expires_at must be an RFC 3339"),
        (#"{"provider":"acme","access_token":"t","uid":"u","dry_run":1}"#, "dry_run must be true or false"),
        (#"{"provider":"acme","access_token":"a\nb","uid":"u"}"#, "access_token must be"),
    ])
    func aBadImportIs400WithoutACall(body: String, expected: String) async throws {
        let s = try Self.setUp()
        let reply = try await s.post(body)
        #expect(reply.status == 400 && reply.body.contains(expected), "\(reply.body)")
        #expect(s.provider.refreshCalls == 0)
    }
}
