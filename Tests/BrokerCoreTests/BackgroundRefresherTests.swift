import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

/// The background refresher: sweeps on the injected clock, renews only due accounts, backs off after failures.
struct BackgroundRefresherTests {
    @Test func aSweepRenewsOnlyActiveRefreshableAccountsWithinTheMargin() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.swept"))
            let service = f.service(margin: 300)
            let refresher = BackgroundRefresher(service: service, interval: 60)
            let soon = try await f.seed(uid: "soon", lifetime: 200)
            let later = try await f.seed(uid: "later", lifetime: 1000)
            let noRefreshToken = try await f.seed(uid: "plain", lifetime: 100, refreshToken: nil)
            let revoked = try await f.seed(uid: "revoked", lifetime: 100, status: .reauthorizationRequired)
            let noExpiry = try await f.seed(provider: "github", uid: "1", lifetime: 0, refreshToken: "ghr_x")
            _ = try await f.accounts.update(id: noExpiry.accountID) {
                var a = $0; a?.expiresAt = nil; return a
            }

            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: 1, refreshed: 1))
            #expect(try await f.stored(soon.accountID)?.accessToken.value == "ya29.swept")
            #expect(try await f.stored(later.accountID) == later)
            #expect(try await f.stored(noRefreshToken.accountID) == noRefreshToken)
            #expect(try await f.stored(revoked.accountID) == revoked)
            #expect(await f.refreshCalls().map { $0.form["refresh_token"] } == ["1//refresh-SENTINEL-0"])

            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary())
            f.clock.advance(701)
            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: 1, refreshed: 1))
            #expect(try await f.stored(later.accountID)?.accessToken.value == "ya29.swept")
            #expect(await f.refreshCalls().count == 2)
        }
    }

    @Test func failuresBackOffExponentiallyAndASuccessResetsThem() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, fail: .transport(.connectRefused, "connection refused"))
            let service = f.service()
            let refresher = BackgroundRefresher(service: service, interval: 60)
            let seeded = try await f.seed(lifetime: 100)
            var attempts: [Int] = []
            // Sweeps every 10 s: attempts after waits of 10 and 20 s (both raised to the 30 s cooldown), then 40 s.
            for _ in 0..<11 {
                let summary = try await refresher.runOnce()
                #expect(summary.due == 1 && summary.refreshed == 0)
                attempts.append(summary.failed)
                f.clock.advance(10)
            }
            #expect(attempts == [1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1])
            #expect(await f.refreshCalls().count == 4)
            #expect(await service.refresher.retryNotBefore(accountID: seeded.accountID) == Date.fixture.addingTimeInterval(100 + 80))
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.back"))
            f.clock.advance(80)
            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: 1, refreshed: 1))
            #expect(await service.refresher.retryNotBefore(accountID: seeded.accountID) == nil)
            #expect(try await f.stored(seeded.accountID)?.accessToken.value == "ya29.back")
            // Every failure kept the token: the account was never touched until the success.
            #expect(f.events.all.filter { $0.result == .refreshed }.count == 1)
        }
    }

    @Test func invalidGrantEndsTheSweepsForThatAccount() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleInvalidGrant)
            let refresher = BackgroundRefresher(service: f.service(), interval: 60)
            let seeded = try await f.seed(lifetime: 100)
            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: 1, failed: 1))
            #expect(try await f.stored(seeded.accountID)?.status == .reauthorizationRequired)
            f.clock.advance(3600)
            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary())
            #expect(await f.refreshCalls().count == 1)
        }
    }

    @Test func theLoopRenewsAccountsNobodyReads() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.loop"))
            let refresher = BackgroundRefresher(service: f.service(), interval: 0.02)
            let seeded = try await f.seed(lifetime: 100)
            refresher.start()
            let renewed = try await eventually(timeout: 30) { try await f.stored(seeded.accountID)?.accessToken.value == "ya29.loop" }
            refresher.stop()
            #expect(renewed)
            #expect(await f.refreshCalls().count == 1)
        }
    }

    @Test func anIntervalOfZeroNeverStartsTheLoop() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.loop"))
            let refresher = BackgroundRefresher(service: f.service(), interval: 0)
            let seeded = try await f.seed(lifetime: 100)
            refresher.start()
            try await Task.sleep(nanoseconds: 200_000_000)
            refresher.stop()
            #expect(try await f.stored(seeded.accountID) == seeded)
            #expect(await f.upstream.requests.isEmpty)
        }
    }

    @Test func oneAtATimeTheOldestExpiryGoesFirst() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.ordered"))
            let herd = BackgroundRefresher.Herd(concurrency: 1, startJitter: 0)
            let refresher = BackgroundRefresher(service: f.service(margin: 300), interval: 60, herd: herd)
            for (uid, lifetime) in [("c", 250.0), ("a", 120.0), ("d", 290.0), ("b", 200.0), ("e", 200.0)] {
                try await f.seed(uid: uid, lifetime: lifetime, refreshToken: "1//refresh-" + uid)
            }
            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: 5, refreshed: 5))
            // Expiry order; the two expiring together in id order.
            let presented = await f.refreshCalls().map { $0.form["refresh_token"] ?? "" }
            #expect(presented == ["a", "b", "e", "c", "d"].map { "1//refresh-" + $0 })
        }
    }

    @Test func aProvidersRetryAfterStopsItsStartsUntilThenAndOtherProvidersGoOn() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: RefreshBackoffTests.rateLimited(retryAfter: "120"))
            await f.upstream.on(RefreshFixture.githubTokenURL, respond: ProviderWire.githubTokenJSON(accessToken: "ghu_swept"))
            let herd = BackgroundRefresher.Herd(concurrency: 1, startJitter: 0)
            let refresher = BackgroundRefresher(service: f.service(), interval: 60, herd: herd)
            for i in 0..<10 {
                try await f.seed(uid: "g\(i)", lifetime: 100, refreshToken: "1//refresh-\(i)")
                try await f.seed(provider: "github", uid: String(i), lifetime: 100, refreshToken: "ghr_\(i)")
            }
            // Google's first answer pauses Google: one call, nine accounts skipped; GitHub's ten all go.
            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: 20, refreshed: 10, skipped: 9, failed: 1))
            #expect(await f.refreshCalls().count == 1)
            #expect(await f.refreshCalls(to: RefreshFixture.githubTokenURL).count == 10)
            // Until Retry-After has passed no sweep calls Google, whichever account is next.
            f.clock.advance(119)
            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: 10, skipped: 10))
            #expect(await f.refreshCalls().count == 1)
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.resumed"))
            f.clock.advance(1)
            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: 10, refreshed: 10))
            #expect(await f.refreshCalls().count == 11)
        }
    }

    @Test func aReaderNeverWaitsForTheQueueAndTheSweepDoesNotRefreshWhatAReaderRenewed() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.renewed"))
            let held = HeldUpstream(forwardingTo: f.upstream)
            let service = f.service(margin: 300, upstream: held)
            let herd = BackgroundRefresher.Herd(concurrency: 1, startJitter: 0)
            let refresher = BackgroundRefresher(service: service, interval: 60, herd: herd)
            try await f.seed(uid: "first", lifetime: 100, refreshToken: "1//refresh-first")
            try await f.seed(uid: "second", lifetime: 150, refreshToken: "1//refresh-second")
            let last = try await f.seed(uid: "third", lifetime: 200, refreshToken: "1//refresh-third")
            let valid = try await f.seed(uid: "valid", lifetime: 3600, refreshToken: "1//refresh-valid")
            let sweep = Task { try await refresher.runOnce() }
            // The sweep's one slot is taken by the first account's call, held at the provider; the others queue.
            try await held.waitForArrivals(1)
            // A read of an account that is not due answers from the store while the sweep is stuck.
            #expect(try await service.account(id: valid.accountID) == valid)
            // A reader of a due account still in the queue refreshes it at once instead of waiting its turn.
            let reader = Task { try await service.account(id: last.accountID) }
            try await held.waitForArrivals(2)
            await held.open()
            #expect(try await reader.value.accessToken.value == "ya29.renewed")
            // The sweep finds the third account renewed and calls nobody for it.
            #expect(try await sweep.value == BackgroundRefresher.Summary(due: 3, refreshed: 3))
            let presented = await f.refreshCalls().map { $0.form["refresh_token"] ?? "" }
            #expect(presented.sorted() == ["1//refresh-first", "1//refresh-second", "1//refresh-third"])
        }
    }

    @Test func aProvidersPauseHoldsTheSweepsOfEveryReplicaSharingTheBackoff() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: RefreshBackoffTests.rateLimited(retryAfter: "120"))
            let lock = InProcessRefreshLock(now: f.clock.function)
            let shared = InProcessRefreshBackoffStore(now: f.clock.function)
            func replica() -> BackgroundRefresher {
                let service = AccountService(
                    accounts: f.accounts, registry: f.registry, upstream: f.upstream, redirectURI: "https://broker.example/callback",
                    now: f.clock.function, refreshLock: lock, refreshBackoff: shared)
                return BackgroundRefresher(service: service, interval: 60, herd: BackgroundRefresher.Herd(concurrency: 1, startJitter: 0))
            }
            let a = replica(), b = replica()
            for i in 0..<5 { try await f.seed(uid: "g\(i)", lifetime: 100, refreshToken: "1//refresh-\(i)") }
            #expect(try await a.runOnce() == BackgroundRefresher.Summary(due: 5, skipped: 4, failed: 1))
            // The other replica never saw the 429, yet calls nobody until Retry-After has passed.
            f.clock.advance(60)
            #expect(try await b.runOnce() == BackgroundRefresher.Summary(due: 5, skipped: 5))
            #expect(await f.refreshCalls().count == 1)
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.resumed"))
            f.clock.advance(60)
            #expect(try await b.runOnce() == BackgroundRefresher.Summary(due: 5, refreshed: 5))
            #expect(await f.refreshCalls().count == 6)
        }
    }
}
