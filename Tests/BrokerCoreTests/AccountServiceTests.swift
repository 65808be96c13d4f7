import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

/// Reading accounts against the clock, listing, and deleting with best-effort revocation.
struct AccountServiceTests {
    /// Stores an account of `provider` authorized now that expires after `lifetime` seconds (nil: never).
    private func seed(
        _ broker: BrokerHarness, provider: String = "weibo", uid: String = "3733034601",
        lifetime: TimeInterval? = 3600, status: AccountStatus = .active
    ) async throws -> Account {
        var account = Account.make(provider: provider, uid: uid, accessToken: "\(provider)-access-SENTINEL")
        account.expiresAt = lifetime.map { Date.fixture.addingTimeInterval($0) }
        account.status = status
        try await broker.accounts.put(account)
        return try #require(try await broker.accounts.get(id: account.accountID))
    }

    @Test func accountIsReturnedUntilItExpiresThenExpiredButKept() async throws {
        try await BrokerHarness.with { broker in
            let stored = try await seed(broker, lifetime: 3600)
            #expect(try await broker.accountService.account(id: stored.accountID) == stored)
            broker.clock.advance(3599)
            #expect(try await broker.accountService.account(id: stored.accountID) == stored)
            broker.clock.advance(1)
            let refusal1 = await brokerError { try await broker.accountService.account(id: stored.accountID) }
            #expect(refusal1 == .expired)
            #expect(try await broker.accounts.get(id: stored.accountID) == stored)
        }
    }

    @Test func pagesFilterByTheStatusTheAccountsReportNow() async throws {
        try await BrokerHarness.with { broker in
            let lasting = try await seed(broker, provider: "weibo", uid: "1", lifetime: 7200)
            let lapsing = try await seed(broker, provider: "weibo", uid: "2", lifetime: 60)
            let revoked = try await seed(broker, provider: "weibo", uid: "3", status: .reauthorizationRequired)
            func ids(_ status: String?) async throws -> [String] {
                try await broker.accountService.page(after: nil, limit: 10, filter: AccountFilter(), status: status).accounts.map(\.id)
            }
            #expect(try await ids("active") == [lasting.id, lapsing.id])
            #expect(try await ids("expired").isEmpty)
            #expect(try await ids("reauthorization_required") == [revoked.id])
            broker.clock.advance(61)
            // Expired is what the clock says now, for an account that cannot be refreshed.
            #expect(try await ids("active") == [lasting.id])
            #expect(try await ids("expired") == [lapsing.id])
            #expect(try await ids(nil) == [lasting.id, lapsing.id, revoked.id])
            // A browser's page keeps to its own ids, with the same filter and paging.
            let own = try await broker.accountService.page(
                ids: [revoked.accountID, lapsing.accountID, "weibo:gone"], after: nil, limit: 1, filter: AccountFilter(), status: nil)
            #expect(own.accounts.map(\.id) == [lapsing.id] && own.nextAfter == lapsing.accountID)
            let next = try await broker.accountService.page(
                ids: [revoked.accountID, lapsing.accountID], after: own.nextAfter, limit: 1, filter: AccountFilter(),
                status: "reauthorization_required")
            #expect(next.accounts.map(\.id) == [revoked.id] && next.nextAfter == nil)
        }
    }

    @Test func accountWithoutExpiryNeverExpires() async throws {
        try await BrokerHarness.with { broker in
            let stored = try await seed(broker, provider: "github", uid: "1", lifetime: nil)
            broker.clock.advance(10 * 365 * 86_400)
            #expect(try await broker.accountService.account(id: stored.accountID) == stored)
        }
    }

    @Test func missingAndReauthorizationRequiredAccountsAreRefused() async throws {
        try await BrokerHarness.with { broker in
            let refusal2 = await brokerError { try await broker.accountService.account(id: "weibo:nobody") }
            #expect(refusal2 == .notFound)
            let revoked = try await seed(broker, status: .reauthorizationRequired)
            let refusal3 = await brokerError { try await broker.accountService.account(id: revoked.accountID) }
            #expect(refusal3 == .reauthorizationRequired)
        }
    }

    @Test func accountStoredByACallbackExpiresAfterExpiresIn() async throws {
        try await BrokerHarness.with { broker in
            // No refresh token: an account that has one is refreshed before expiry instead (AccountServiceRefreshTests).
            await broker.answerGoogleToken(accessToken: "ya29", refreshToken: nil, expiresIn: 3920)
            let account = try await broker.callback(try await broker.begin("google")).account
            broker.clock.advance(3919)
            #expect(try await broker.accountService.account(id: account.accountID).id == account.id)
            broker.clock.advance(1)
            let refusal4 = await brokerError { try await broker.accountService.account(id: account.accountID) }
            #expect(refusal4 == .expired)
        }
    }

    @Test func listFiltersByProvider() async throws {
        try await BrokerHarness.with { broker in
            let weibo = try await seed(broker)
            let github = try await seed(broker, provider: "github", uid: "1")
            #expect(try await broker.accountService.list(provider: nil) == [github, weibo])
            #expect(try await broker.accountService.list(provider: "weibo") == [weibo])
            #expect(try await broker.accountService.list(provider: "google").isEmpty)
        }
    }

    @Test func deleteRevokesAtWeiboThenDeletes() async throws {
        try await BrokerHarness.with { broker in
            let stored = try await seed(broker)
            let result = try await broker.accountService.delete(id: stored.accountID)
            #expect(result.account == stored)
            #expect(result.revoked == true)
            #expect(result.revokeError == nil)
            let revoke = try #require(await broker.upstream.requests(to: "https://api.weibo.com/oauth2/revokeoauth2").first)
            #expect(revoke.form == ["access_token": "weibo-access-SENTINEL"])
            #expect(try await broker.accounts.get(id: stored.accountID) == nil)
        }
    }

    @Test func deleteStillDeletesWhenRevocationFails() async throws {
        try await BrokerHarness.with { broker in
            let failures: [(String, (FakeUpstream) async -> Void)] = [
                (
                    "HTTP 500",
                    {
                        await $0.on(
                            "https://api.weibo.com/oauth2/revokeoauth2", respond: ProviderWire.response(500, "text/html", "<h1>oops</h1>"))
                    }
                ),
                ("in time", { await $0.on("https://api.weibo.com/oauth2/revokeoauth2", fail: .timeout) }),
                (
                    "expired_token (21327)",
                    {
                        await $0.on(
                            "https://api.weibo.com/oauth2/revokeoauth2",
                            respond: ProviderWire.response(
                                200, "text/plain", #"{"error":"expired_token","error_code":21327,"request":"/oauth2/revokeoauth2"}"#))
                    }
                ),
            ]
            for (expected, install) in failures {
                await install(broker.upstream)
                let stored = try await seed(broker)
                let result = try await broker.accountService.delete(id: stored.accountID)
                #expect(result.revoked == false)
                let message = try #require(result.revokeError)
                #expect(message.contains(expected), "\(message)")
                #expect(!message.contains("SENTINEL"))
                #expect(try await broker.accounts.get(id: stored.accountID) == nil)
            }
        }
    }

    @Test func deleteWithoutARevokeEndpointMakesNoCall() async throws {
        try await BrokerHarness.with { broker in
            let stored = try await seed(broker, provider: "github", uid: "1")
            let result = try await broker.accountService.delete(id: stored.accountID)
            #expect(result.revoked == nil)
            #expect(await broker.upstream.requests.isEmpty)
            #expect(try await broker.accounts.get(id: stored.accountID) == nil)
        }
    }

    /// An account outlives its provider's settings: what can still be revoked is, the rest is reported or skipped, and all is deleted.
    @Test func deleteAtAProviderThatLostItsSettings() async throws {
        try await BrokerHarness.with(environment: [:]) { broker in
            let weibo = try await seed(broker)
            let weiboResult = try await broker.accountService.delete(id: weibo.accountID)
            // Weibo's revoke endpoint takes no client credentials, so it needs none of the missing settings.
            #expect(weiboResult.revoked == true)
            let revoke = try #require(await broker.upstream.requests(to: "https://api.weibo.com/oauth2/revokeoauth2").first)
            #expect(revoke.form == ["access_token": "weibo-access-SENTINEL"])
            let tmdb = try await seed(broker, provider: "tmdb", uid: "1")
            let tmdbResult = try await broker.accountService.delete(id: tmdb.accountID)
            #expect(tmdbResult.revoked == false)
            #expect(tmdbResult.revokeError?.contains("TMDB_API_KEY") == true, "\(String(describing: tmdbResult.revokeError))")
            let twitter = try await seed(broker, provider: "twitter", uid: "2")
            #expect(try await broker.accountService.delete(id: twitter.accountID).revoked == nil)
            #expect(await broker.upstream.requests.count == 1)
            for account in [weibo, tmdb, twitter] { #expect(try await broker.accounts.get(id: account.accountID) == nil) }
        }
    }

    @Test func deleteOfAnUnknownAccountIsNotFound() async throws {
        try await BrokerHarness.with { broker in
            let refusal5 = await brokerError { try await broker.accountService.delete(id: "google:404") }
            #expect(refusal5 == .notFound)
            #expect(await broker.upstream.requests.isEmpty)
        }
    }

    /// The inline read that serves `/account` on the HTTP worker queue: a valid file-store account at once, anything else nil.
    @Test func accountNowAnswersFromMemoryOnlyWhileTheAccountIsValid() async throws {
        try await BrokerHarness.with { broker in
            let stored = try await seed(broker, lifetime: 3600)
            #expect(broker.accountService.accountNow(id: stored.accountID) == stored)
            // The lighter form `GET /account` reads is served exactly when the whole account is.
            #expect(broker.accountService.heldNow(id: stored.accountID)?.account == stored)
            #expect(broker.accountService.accountNow(id: "weibo:nobody") == nil)
            #expect(broker.accountService.heldNow(id: "weibo:nobody") == nil)
            broker.clock.advance(3600)
            #expect(broker.accountService.accountNow(id: stored.accountID) == nil)
            #expect(broker.accountService.heldNow(id: stored.accountID) == nil)
            let revoked = try await seed(broker, uid: "2", status: .reauthorizationRequired)
            #expect(broker.accountService.accountNow(id: revoked.accountID) == nil)
            #expect(broker.accountService.heldNow(id: revoked.accountID) == nil)
        }
    }
}
