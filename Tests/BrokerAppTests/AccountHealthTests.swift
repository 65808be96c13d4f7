import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// An account's health over time, end to end on real sockets with the broker's injected clock: the per-account
/// cooldown, `account.recovered`, giving up after `BROKER_REFRESH_GIVE_UP` (`refresh_exhausted`) and coming back
/// from it by a forced refresh or a new sign-in.
@Suite(.scoped) struct AccountHealthTests {
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
    static let accountPath = "/account?id=acme:4242"
    /// One hour: long enough for a dozen tries, short enough to reach in a few steps of the clock.
    static let giveUp = 3600

    /// A broker with webhooks to a real receiver, an account connected, and its provider's refreshes failing with 500.
    static func failingAccount(giveUp: Int = giveUp) async throws -> WebhookEndToEndTests.Setup {
        let s = try await WebhookEndToEndTests.setUp(["BROKER_REFRESH_GIVE_UP": String(giveUp)])
        #expect(await s.connect() == 200)
        s.provider.set { $0.refreshFailure = .serverError }
        return s
    }

    static func post(_ s: WebhookEndToEndTests.Setup, _ target: String) async -> TestHTTP.Reply? {
        await TestHTTP.send(port: s.broker.port, method: "POST", target: target, headers: api)
    }

    /// The types of the events the receiver accepted, sorted (delivery order is not promised), once the outbox is empty.
    static func delivered(_ s: WebhookEndToEndTests.Setup) async -> [String] {
        _ = await eventually { await s.metric("broker_webhook_outbox_pending") == 0 }
        return s.receiver.accepted.compactMap(\.type).sorted()
    }

    /// Reads the expired account every 300 s of the clock until the broker gives up: a `410 refresh_exhausted`.
    /// Returns the number of reads it took; fails the test after a day of them.
    static func readUntilExhausted(_ s: WebhookEndToEndTests.Setup) async throws -> Int {
        for reads in 1...288 {
            let reply = try #require(await s.get(accountPath))
            if reply.status == 410 {
                #expect(reply.body.contains("\"error\":\"refresh_exhausted\""))
                return reads
            }
            #expect(reply.status == 502)
            s.clock.advance(300)
        }
        Issue.record("no refresh_exhausted after a day of failures")
        return 0
    }

    @Test func fiftyReadsOfAFailingAccountInALoopCauseOneProviderCallWithinTheCooldown() async throws {
        let s = try await Self.failingAccount()
        s.clock.advance(3601)
        let before = s.provider.tokenCalls
        var statuses: [Int?] = []
        // 50 reads over 24.5 s: the old backoff's first wait (10 s) would have let a second call through.
        for _ in 0..<50 {
            statuses.append(await s.get(Self.accountPath)?.status)
            s.clock.advance(0.5)
        }
        #expect(statuses == Array(repeating: 502, count: 50))
        #expect(s.provider.tokenCalls - before == 1)
        #expect(s.provider.refreshCalls == 1)
        // The cooldown's end: the next read tries again.
        s.clock.advance(5.5)
        #expect(await s.get(Self.accountPath)?.status == 502)
        #expect(s.provider.refreshCalls == 2)
    }

    @Test func aRefreshThatWorksAfterFailuresSendsAccountRecovered() async throws {
        let s = try await Self.failingAccount()
        let failingSince = s.clock.now.addingTimeInterval(3601)
        s.clock.advance(3601)
        #expect(await s.get(Self.accountPath)?.status == 502)
        s.clock.advance(30)
        #expect(await s.get(Self.accountPath)?.status == 502)
        s.provider.set { $0.refreshFailure = nil }
        s.clock.advance(30)
        let back = try #require(await s.get(Self.accountPath))
        #expect(back.status == 200 && back.body.contains("\"status\":\"active\""))
        #expect(s.provider.refreshCalls == 3)
        // One more read: nothing new to report.
        #expect(await s.get(Self.accountPath)?.status == 200)
        #expect(await Self.delivered(s) == ["account.connected", "account.recovered", "account.refresh_failed"])
        let recovered = try #require(s.receiver.accepted.first { $0.type == "account.recovered" })
        #expect(recovered.data("account_id") as? String == "acme:4242")
        #expect(recovered.data("status") as? String == "active")
        #expect(recovered.data("failing_since") as? String == RFC3339Date.format(failingSince))
    }

    @Test func afterTheGiveUpTheAccountIsExhaustedReadsCallNoProviderAndAForcedRefreshTriesAgain() async throws {
        let s = try await Self.failingAccount()
        s.clock.advance(3601)
        let reads = try await Self.readUntilExhausted(s)
        // A try every 300 s from the first failure: the one at 3600 s gives up.
        #expect(reads == 13)
        #expect(s.provider.refreshCalls == 13)
        // No provider call on reads after that, however long and often.
        for _ in 0..<20 {
            let reply = try #require(await s.get(Self.accountPath))
            #expect(reply.status == 410 && reply.body.contains("\"error\":\"refresh_exhausted\""))
            #expect(reply.header("Retry-After") == nil)
            s.clock.advance(600)
        }
        #expect(s.provider.refreshCalls == 13)
        let list = try #require(await s.get("/accounts"))
        #expect(RefreshEndToEndTests.field(list.body, "status") == "refresh_exhausted")
        let filtered = try #require(await s.get("/accounts?status=refresh_exhausted"))
        #expect(filtered.status == 200 && filtered.body.contains("\"id\":\"acme:4242\""))
        #expect(try #require(await s.get("/accounts?status=active")).body.contains("\"accounts\":[]"))
        #expect(await s.metric("broker_accounts{status=\"refresh_exhausted\"}") == 1)
        #expect(await s.metric("broker_accounts{status=\"active\"}") == 0)

        // A forced refresh tries again; failing, it leaves the account exhausted.
        let forced = try #require(await Self.post(s, "/account/refresh?id=acme:4242"))
        #expect(forced.status == 502 && forced.body.contains("\"error\":\"upstream_error\""))
        #expect(s.provider.refreshCalls == 14)
        #expect(await s.get(Self.accountPath)?.status == 410)
        #expect(s.provider.refreshCalls == 14)
        // Past the cooldown, with the provider back: active again, and said so.
        s.provider.set { $0.refreshFailure = nil }
        s.clock.advance(30)
        let revived = try #require(await Self.post(s, "/account/refresh?id=acme:4242"))
        #expect(revived.status == 200 && revived.body.contains("\"status\":\"active\""))
        #expect(s.provider.refreshCalls == 15)
        #expect(await s.get(Self.accountPath)?.status == 200)
        #expect(await s.metric("broker_accounts{status=\"refresh_exhausted\"}") == 0)
        #expect(
            await Self.delivered(s) == [
                "account.connected", "account.recovered", "account.refresh_exhausted", "account.refresh_failed",
            ])
        let exhausted = try #require(s.receiver.accepted.first { $0.type == "account.refresh_exhausted" })
        #expect(exhausted.data("status") as? String == "refresh_exhausted")
        #expect(exhausted.data("failing_since") != nil)
        #expect(!s.broker.log.contains("SENTINEL"))
    }

    @Test func aNewSignInMakesAnExhaustedAccountActive() async throws {
        let s = try await Self.failingAccount()
        s.clock.advance(3601)
        _ = try await Self.readUntilExhausted(s)
        let calls = s.provider.refreshCalls
        #expect(await s.connect() == 200)
        let reply = try #require(await s.get(Self.accountPath))
        #expect(reply.status == 200 && reply.body.contains("\"status\":\"active\""))
        #expect(s.provider.refreshCalls == calls)
        #expect(RefreshEndToEndTests.field(try #require(await s.get("/accounts")).body, "status") == "active")
        // Still failing: the new token is refreshed when due and the run starts over, far from the give-up.
        s.clock.advance(3601)
        #expect(await s.get(Self.accountPath)?.status == 502)
        #expect(RefreshEndToEndTests.field(try #require(await s.get("/accounts")).body, "status") == "active")
    }

    @Test func theGiveUpPeriodComesFromTheEnvironmentAndBadValuesNameTheVariable() throws {
        #expect(try BrokerConfiguration.from(environment: [:]).refreshGiveUp == 4 * 86_400)
        #expect(try BrokerConfiguration.from(environment: ["BROKER_REFRESH_GIVE_UP": "7200"]).refreshGiveUp == 7200)
        for bad in ["0", "59", "-1", "4d", "31536001", "nan"] {
            do {
                _ = try BrokerConfiguration.from(environment: ["BROKER_REFRESH_GIVE_UP": bad])
                Issue.record("BROKER_REFRESH_GIVE_UP=\(bad) was accepted")
            } catch {
                #expect(error.variable == "BROKER_REFRESH_GIVE_UP")
            }
        }
    }
}
