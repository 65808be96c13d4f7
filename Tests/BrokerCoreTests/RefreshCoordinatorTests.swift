import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerCore

/// Single flight across replicas: two account services sharing one store and one lock behave as two brokers on Redis.
struct RefreshCoordinatorTests {
    static let lockKey = "refresh:google:110169484474386276334"

    @Test func twentyReadersOnTwoReplicasCauseOneRefresh() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.shared"))
            let held = HeldUpstream(forwardingTo: f.upstream)
            let lock = InProcessRefreshLock(now: f.clock.function)
            let replicas = [f.service(lock: lock, upstream: held), f.service(lock: lock, upstream: held)]
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3500)
            try await withThrowingTaskGroup(of: String.self) { group in
                for i in 0..<20 {
                    group.addTask { try await replicas[i % 2].account(id: seeded.accountID).accessToken.value }
                }
                try await held.waitForArrivals(1)
                // Every reader waits, ten on each replica (one of them the leader waiting for the lock), before the
                // provider answers.
                #expect(
                    await eventually {
                        var waiting = 0
                        for replica in replicas { waiting += await replica.refresher.flight.callers(of: Self.lockKey) }
                        return waiting == 20
                    })
                await held.open()
                var tokens: [String] = []
                for try await token in group { tokens.append(token) }
                #expect(tokens == Array(repeating: "ya29.shared", count: 20))
            }
            #expect(await f.refreshCalls().count == 1)
            // The lock was given back.
            #expect(await lock.acquire(key: Self.lockKey, ttl: 1) != nil)
        }
    }

    @Test func aFollowerNeverCallsTheProviderWhileAnotherReplicaHoldsTheLock() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.mine"))
            let lock = CountingLock(now: f.clock.function)
            let service = f.service(lock: lock)
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3500)
            let otherReplica = try #require(await lock.acquire(key: Self.lockKey, ttl: 30))
            let reader = Task { try await service.account(id: seeded.accountID) }
            // The reader asked for the lock, was refused, and waits for the other replica's result.
            #expect(await lock.attempts.wait(count: 2))
            #expect(await f.upstream.requests.isEmpty)
            // The other replica stores its result, then lets go of the lock.
            _ = try await f.accounts.update(id: seeded.accountID) { existing in
                var account = existing
                account?.accessToken = Secret("ya29.theirs")
                account?.expiresAt = f.clock.now.addingTimeInterval(3600)
                return account
            }
            #expect(try await reader.value.accessToken.value == "ya29.theirs")
            #expect(await lock.release(key: Self.lockKey, token: otherReplica))
            #expect(await f.upstream.requests.isEmpty)
        }
    }

    @Test func aFollowerTakesOverWhenTheHolderLetsGoWithoutAResult() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.mine"))
            let lock = CountingLock(now: f.clock.function)
            let service = f.service(lock: lock)
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3500)
            let otherReplica = try #require(await lock.acquire(key: Self.lockKey, ttl: 30))
            let reader = Task { try await service.account(id: seeded.accountID) }
            #expect(await lock.attempts.wait(count: 2), "the reader was refused the lock")
            // The other replica's refresh failed transiently: it releases and stores nothing.
            #expect(await lock.release(key: Self.lockKey, token: otherReplica))
            #expect(try await reader.value.accessToken.value == "ya29.mine")
            #expect(await f.refreshCalls().count == 1)
        }
    }

    @Test func aLeaderRereadsAfterTakingTheLockAndNeverPresentsARotatedOutToken() async throws {
        try await RefreshFixture.with { f in
            let github = RotatingTokenEndpoint(refreshToken: "ghr_refresh-SENTINEL-0")
            await f.upstream.on(RefreshFixture.githubTokenURL) { github.answer($0) }
            let lock = InProcessRefreshLock(now: f.clock.function)
            let (a, b) = (f.service(lock: lock), f.service(lock: lock))
            let seeded = try await f.seed(provider: "github", uid: "1", lifetime: 28_800, refreshToken: "ghr_refresh-SENTINEL-0")
            f.clock.advance(28_700)
            // Replica B read the account just before replica A refreshed it.
            let staleOnB = try #require(try await f.stored(seeded.accountID))
            let onA = try await a.account(id: seeded.accountID)
            let outcome = try await b.refresher.refresh(staleOnB, respectingBackoff: false)
            #expect(outcome == .refreshed(onA))
            #expect(github.presented == ["ghr_refresh-SENTINEL-0"])
            #expect(try await f.stored(seeded.accountID)?.refreshToken?.value == github.current)
        }
    }

    @Test func aReauthorizationThatLandsDuringARefreshIsNotOverwritten() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.old-grant"))
            let held = HeldUpstream(forwardingTo: f.upstream)
            let service = f.service(upstream: held)
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3500)
            let reader = Task { try await service.account(id: seeded.accountID) }
            try await held.waitForArrivals(1)
            var reauthorized = seeded
            reauthorized.accessToken = Secret("ya29.new-grant")
            reauthorized.refreshToken = Secret("1//new-grant-refresh")
            reauthorized.expiresAt = f.clock.now.addingTimeInterval(3600)
            try await f.accounts.put(reauthorized)
            await held.open()
            #expect(try await reader.value.accessToken.value == "ya29.new-grant")
            #expect(try await f.stored(seeded.accountID) == reauthorized)
        }
    }

    @Test func aDeletedAccountIsNotFoundAndNotRecreated() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.x"))
            let held = HeldUpstream(forwardingTo: f.upstream)
            let service = f.service(upstream: held)
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3500)
            let reader = Task { await brokerError { try await service.account(id: seeded.accountID) } }
            try await held.waitForArrivals(1)
            _ = try await f.accounts.delete(id: seeded.accountID)
            await held.open()
            #expect(await reader.value == .notFound)
            #expect(try await f.stored(seeded.accountID) == nil)
        }
    }

    @Test func theInProcessLockHasOneOwnerAndExpiresAfterItsTTL() async throws {
        let clock = TestClock()
        let lock = InProcessRefreshLock(now: clock.function)
        let owner = try #require(await lock.acquire(key: "k", ttl: 30))
        #expect(await lock.acquire(key: "k", ttl: 30) == nil)
        #expect(await lock.acquire(key: "other", ttl: 30) != nil)
        #expect(await lock.release(key: "k", token: "not-the-owner") == false)
        #expect(await lock.acquire(key: "k", ttl: 30) == nil)
        clock.advance(30)
        let next = try #require(await lock.acquire(key: "k", ttl: 30))
        #expect(next != owner)
        // The first owner's TTL ran out: its late release must not free the new owner's lock.
        #expect(await lock.release(key: "k", token: owner) == false)
        #expect(await lock.acquire(key: "k", ttl: 30) == nil)
        #expect(await lock.release(key: "k", token: next))
        #expect(await lock.acquire(key: "k", ttl: 30) != nil)
    }

    @Test func aBackoffKeepsTheRunsFirstFailureAndAnEarlierVersionsEncodingStillDecodes() throws {
        let policy = RefreshCoordinator.Policy(backoffBase: 10, backoffCap: 300, cooldown: 30, giveUp: 3600)
        let failure = RefreshFailure(.upstreamTimeout(step: "token_refresh"))
        let first = policy.backoff(after: nil, failing: failure, at: .fixture, atLeast: policy.cooldown)
        #expect(first.firstFailureAt == .fixture && first.notBefore == Date.fixture.addingTimeInterval(30))
        let later = Date.fixture.addingTimeInterval(3600)
        let second = policy.backoff(after: first, failing: failure, at: later)
        #expect(second.firstFailureAt == .fixture && second.failures == 2)
        #expect(!policy.hasGivenUp(failingSince: first.firstFailureAt, at: later.addingTimeInterval(-0.001)))
        #expect(policy.hasGivenUp(failingSince: second.firstFailureAt, at: later))
        #expect(RefreshBackoff(encoded: second.encoded) == second)
        // Written before the first failure's time was kept: it decodes, and its run counts from its next failure.
        let old = try #require(
            RefreshBackoff(
                encoded: Array(
                    #"{"error":"upstream_error","failures":3,"not_before_ms":1796025600000,"reason":"HTTP 503","step":"token_refresh"}"#
                        .utf8)))
        #expect(old.failures == 3 && old.firstFailureAt == nil)
        #expect(!policy.hasGivenUp(failingSince: old.firstFailureAt, at: later))
        #expect(policy.backoff(after: old, failing: failure, at: later).firstFailureAt == later)
        // A first failure that is not a time in range is damage: no backoff.
        #expect(
            RefreshBackoff(
                encoded: Array(
                    #"{"error":"upstream_timeout","failures":1,"first_failure_ms":"soon","not_before_ms":0,"step":"token_refresh"}"#.utf8))
                == nil)
    }

    @Test func backoffDoublesFromTheBaseUpToTheCap() {
        let policy = RefreshCoordinator.Policy(backoffBase: 10, backoffCap: 300)
        #expect((0...7).map { policy.backoffDelay(afterFailures: $0) } == [0, 10, 20, 40, 80, 160, 300, 300])
        #expect(policy.backoffDelay(afterFailures: 10_000) == 300)
    }
}
