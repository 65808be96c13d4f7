import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerCore

/// Releases the store did not answer: retried until it does, only with the holder's token, bounded, and stopped.
///
/// The retries run on a background task; a test waits for the store's calls (``TestEvent``) or, for what the task
/// does after a call, with ``eventually(timeout:interval:_:)``, never for a time.
@Suite(.timeLimit(.minutes(2))) struct PendingLockReleasesTests {
    /// A lock store in memory whose compare-and-delete fails while it is down or for its next `failures` calls.
    final class FakeLockStore: Sendable {
        struct State {
            var holders: [String: String] = [:]
            var down = false
            var failures = 0
            var calls: [(key: String, token: String, answered: Bool)] = []
        }

        let state = Mutex(State())
        /// Signalled after each call, answered or not.
        let called = TestEvent()

        /// The release ``PendingLockReleases`` retries: deletes `key` only while `token` holds it.
        func release(key: String, token: String) throws(StoreError) -> Bool {
            defer { called.signal() }
            return try state.withLock { (s) throws(StoreError) -> Bool in
                if s.down || s.failures > 0 {
                    s.failures = max(0, s.failures - 1)
                    s.calls.append((key, token, false))
                    throw StoreError.unavailable("the store does not answer")
                }
                s.calls.append((key, token, true))
                guard s.holders[key] == token else { return false }
                s.holders[key] = nil
                return true
            }
        }

        var calls: [(key: String, token: String, answered: Bool)] { state.withLock { $0.calls } }
    }

    /// A list over `store`; retries start almost at once unless `firstDelay` is long (then only `flush` releases).
    static func make(
        _ store: FakeLockStore, firstDelay: Duration = .milliseconds(1), capacity: Int = 1024,
        horizon: Duration = .seconds(600), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) -> PendingLockReleases {
        PendingLockReleases(
            capacity: capacity, horizon: horizon, firstDelay: firstDelay, maximumDelay: max(firstDelay, .milliseconds(8)), now: now
        ) { key, token throws(StoreError) in try store.release(key: key, token: token) }
    }

    @Test func aReleaseThatFailsThreeTimesIsRetriedUntilTheStoreAnswersThenForgotten() async {
        let store = FakeLockStore()
        store.state.withLock {
            $0.holders["refresh:a"] = "token-a"
            $0.failures = 3
        }
        let releases = Self.make(store)
        defer { releases.stop() }
        releases.remember(key: "refresh:a", token: "token-a")
        #expect(releases.count == 1)

        #expect(await store.called.wait(count: 4), "three failed tries, then the one the store answers")
        #expect(await eventually { releases.count == 0 })
        let calls = store.calls
        #expect(calls.map(\.answered) == [false, false, false, true])
        #expect(calls.allSatisfy { $0.key == "refresh:a" && $0.token == "token-a" })
        #expect(store.state.withLock { $0.holders["refresh:a"] } == nil)
        // Nothing pending: no more calls (the retry task ended).
        await Self.flushAndExpectNoCall(releases, store, key: "refresh:a")
    }

    @Test func theRetryDeletesOnlyWithItsOwnTokenSoALockTakenOverMeanwhileStays() async {
        let store = FakeLockStore()
        store.state.withLock { $0.down = true }
        let releases = Self.make(store)
        defer { releases.stop() }
        // The release went through but its answer was lost; then another holder took the free lock.
        releases.remember(key: "refresh:b", token: "old")
        #expect(await store.called.wait(count: 1))
        store.state.withLock {
            $0.holders["refresh:b"] = "new"
            $0.down = false
        }
        #expect(await eventually { releases.count == 0 })
        #expect(store.calls.last.map { $0.token == "old" && $0.answered } == true)
        #expect(store.state.withLock { $0.holders["refresh:b"] } == "new")
    }

    @Test func flushTriesThePendingReleaseOfItsKeyAtOnceAndNoOther() async {
        let store = FakeLockStore()
        store.state.withLock {
            $0.holders["refresh:c"] = "token-c"
            $0.holders["refresh:d"] = "token-d"
            $0.down = true
        }
        // The background retry waits an hour: only `flush` can release here.
        let releases = Self.make(store, firstDelay: .seconds(3600))
        defer { releases.stop() }
        await Self.flushAndExpectNoCall(releases, store, key: "refresh:c")
        releases.remember(key: "refresh:c", token: "token-c")
        releases.remember(key: "refresh:d", token: "token-d")

        // Still down: the flush tries, fails and keeps the release.
        await releases.flush(key: "refresh:c")
        #expect(store.calls.map(\.token) == ["token-c"])
        #expect(releases.count == 2)

        store.state.withLock { $0.down = false }
        await releases.flush(key: "refresh:c")
        #expect(store.calls.map(\.token) == ["token-c", "token-c"])
        #expect(releases.count == 1)
        #expect(store.state.withLock { $0.holders } == ["refresh:d": "token-d"])
    }

    @Test func theListKeepsTheNewestCapacityReleases() async {
        let store = FakeLockStore()
        let releases = Self.make(store, firstDelay: .seconds(3600), capacity: 2)
        defer { releases.stop() }
        releases.remember(key: "k1", token: "t1")
        releases.remember(key: "k2", token: "t2")
        releases.remember(key: "k2", token: "t2")
        #expect(releases.count == 2, "the same release twice is remembered once")
        releases.remember(key: "k3", token: "t3")
        #expect(releases.count == 2)
        await Self.flushAndExpectNoCall(releases, store, key: "k1")
        await releases.flush(key: "k3")
        #expect(store.calls.map(\.token) == ["t3"])
    }

    @Test func uncertainAcquiresAreBoundedOnTheirOwnAndNeverPushOutARelease() async {
        let store = FakeLockStore()
        let releases = Self.make(store, firstDelay: .seconds(3600), capacity: 2)
        defer { releases.stop() }
        releases.remember(key: "held", token: "t0")
        for index in 1...3 { releases.rememberUncertainAcquire(key: "polled", token: "u\(index)") }
        #expect(releases.count == 3, "the release and the two newest uncertain acquires")
        await releases.flush(key: "held")
        await releases.flush(key: "polled")
        #expect(store.calls.map(\.token) == ["t0", "u2", "u3"])
        #expect(releases.count == 0)
    }

    @Test func aReleaseIsGivenUpPastTheHorizonWhileTheStoreStaysAway() async {
        let store = FakeLockStore()
        store.state.withLock { $0.down = true }
        let clock = Mutex(ContinuousClock.now)
        let releases = Self.make(store, horizon: .seconds(60), now: { clock.withLock { $0 } })
        defer { releases.stop() }
        releases.remember(key: "refresh:e", token: "token-e")
        #expect(await store.called.wait(count: 2), "retried while within the horizon")
        clock.withLock { $0 += .seconds(61) }
        #expect(await eventually { releases.count == 0 })
        // Given up, not released: the lock's TTL frees it.
        #expect(store.calls.allSatisfy { !$0.answered })
    }

    @Test func afterStopNothingIsRememberedOrRetried() async {
        let store = FakeLockStore()
        store.state.withLock { $0.down = true }
        let releases = Self.make(store)
        releases.remember(key: "refresh:f", token: "token-f")
        #expect(await store.called.wait(count: 1))
        releases.stop()
        #expect(releases.count == 0)
        releases.remember(key: "refresh:g", token: "token-g")
        #expect(releases.count == 0)
        store.state.withLock { $0.down = false }
        await releases.flush(key: "refresh:g")
        #expect(store.calls.allSatisfy { $0.key == "refresh:f" })
    }

    /// Flushes `key` and expects the store was not called for it (nothing pending for that key).
    static func flushAndExpectNoCall(
        _ releases: PendingLockReleases, _ store: FakeLockStore, key: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let before = store.calls.count
        await releases.flush(key: key)
        #expect(store.calls.count == before, sourceLocation: sourceLocation)
    }
}
