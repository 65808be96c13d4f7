import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerRedis

/// The cache's rules without Redis: off until enabled, LRU bound, and reads racing invalidations.
struct TrackedReadCacheTests {
    /// An enabled cache of `capacity` with `keys` read and filled with their own names.
    static func make(capacity: Int = 4, filled keys: [String] = []) -> TrackedReadCache<String> {
        var cache = TrackedReadCache<String>(capacity: capacity)
        cache.enable(redirect: 7)
        for key in keys {
            guard case .miss(let ticket) = cache.lookup(key) else { Issue.record("expected a miss of \(key)"); continue }
            cache.fill(ticket, with: key)
        }
        return cache
    }

    @Test func aDisabledOrZeroSizedCacheIsBypassed() {
        var off = TrackedReadCache<String>(capacity: 4)
        guard case .bypass = off.lookup("a") else { Issue.record("a disabled cache must be bypassed"); return }
        var zero = TrackedReadCache<String>(capacity: 0)
        zero.enable(redirect: 1)
        guard case .bypass = zero.lookup("a") else { Issue.record("a cache of size 0 must be bypassed"); return }
        #expect(!zero.isEnabled)
    }

    @Test func aMissCarriesTheRedirectThenTheFilledValueHits() {
        var cache = Self.make()
        guard case .miss(let ticket) = cache.lookup("a") else { Issue.record("expected a miss"); return }
        #expect(ticket.redirect == 7)
        // A second reader of the same key while the first is in flight reads uncached.
        guard case .bypass = cache.lookup("a") else { Issue.record("expected a bypass while in flight"); return }
        let r1 = cache.peek("a")
        #expect(r1 == nil)
        let r2 = cache.fill(ticket, with: "A")
        #expect(r2)
        guard case .hit(let value) = cache.lookup("a") else { Issue.record("expected a hit"); return }
        #expect(value == "A")
        let r3 = cache.peek("a")
        #expect(r3 == .some("A"))
    }

    @Test func knownAbsencesAreCachedToo() {
        var cache = Self.make()
        guard case .miss(let ticket) = cache.lookup("gone") else { Issue.record("expected a miss"); return }
        cache.fill(ticket, with: nil)
        guard case .hit(let value) = cache.lookup("gone") else { Issue.record("expected a hit"); return }
        #expect(value == nil)
        let r4 = cache.peek("gone")
        #expect(r4 == .some(nil))
    }

    @Test func anInvalidationWhileAReadIsInFlightDiscardsWhatItFetched() {
        var cache = Self.make()
        guard case .miss(let ticket) = cache.lookup("a") else { Issue.record("expected a miss"); return }
        let r5 = cache.invalidate("a")
        #expect(r5)
        let r6 = cache.fill(ticket, with: "stale")
        #expect(!r6)
        let r7 = cache.peek("a")
        #expect(r7 == nil)
        // The next read starts afresh and may fill.
        guard case .miss(let next) = cache.lookup("a") else { Issue.record("expected a miss"); return }
        #expect(next.token != ticket.token)
        let r8 = cache.fill(ticket, with: "stale")
        #expect(!r8)
        let r9 = cache.fill(next, with: "fresh")
        #expect(r9)
        let r10 = cache.peek("a")
        #expect(r10 == .some("fresh"))
    }

    @Test func losingTrackingDropsEverythingAndReadsInFlightCannotFill() {
        var cache = Self.make(filled: ["a", "b"])
        guard case .miss(let ticket) = cache.lookup("c") else { Issue.record("expected a miss"); return }
        cache.disable()
        #expect(cache.count == 0)
        guard case .bypass = cache.lookup("a") else { Issue.record("expected a bypass while off"); return }
        let r11 = cache.fill(ticket, with: "C")
        #expect(!r11)
        // Re-established with a new client id: empty, and a ticket of the old generation still cannot fill.
        cache.enable(redirect: 9)
        guard case .miss(let fresh) = cache.lookup("c") else { Issue.record("expected a miss"); return }
        #expect(fresh.redirect == 9)
        let r12 = cache.fill(ticket, with: "C")
        #expect(!r12)
        let r13 = cache.fill(fresh, with: "C")
        #expect(r13)
    }

    @Test func theLeastRecentlyUsedEntryGoesFirst() {
        var cache = Self.make(capacity: 3, filled: ["a", "b", "c"])
        #expect(cache.peek("a") == .some("a"))  // a is now the most recent; b the least
        guard case .miss(let ticket) = cache.lookup("d") else { Issue.record("expected a miss"); return }
        cache.fill(ticket, with: "d")
        #expect(cache.count == 3)
        let r14 = cache.peek("b")
        #expect(r14 == nil)
        let r15 = cache.peek("a")
        let r16 = cache.peek("c")
        let r17 = cache.peek("d")
        #expect(r15 == .some("a") && r16 == .some("c") && r17 == .some("d"))
    }

    @Test func holdsNoMoreThanItsCapacityUnderChurn() {
        var cache = Self.make(capacity: 50)
        for round in 0..<2_000 {
            let key = "k\(round * 7 % 173)"
            switch cache.lookup(key) {
            case .miss(let ticket):
                if round % 5 == 0 { cache.abandon(ticket) } else { cache.fill(ticket, with: key) }
            case .hit(let value):
                #expect(value == key)
            case .bypass:
                Issue.record("no read is in flight here")
            }
            if round % 11 == 0 { cache.invalidate("k\(round % 173)") }
            #expect(cache.count <= 50)
        }
        cache.invalidateAll()
        #expect(cache.count == 0)
    }

    @Test func abandoningOnlyRemovesTheTicketsOwnMarker() {
        var cache = Self.make()
        guard case .miss(let first) = cache.lookup("a") else { Issue.record("expected a miss"); return }
        cache.invalidate("a")
        guard case .miss(let second) = cache.lookup("a") else { Issue.record("expected a miss"); return }
        cache.abandon(first)
        let r18 = cache.fill(second, with: "A")
        #expect(r18)
    }
}

extension TrackedReadCacheTests {
    @Test func anUncachedReadKeepsOnlyAnEntryHoldingWhatItSaw() {
        var cache = Self.make(filled: ["a"])
        cache.settle("a", seen: "a", equal: ==)
        let kept = cache.peek("a")
        #expect(kept == .some("a"))
        cache.settle("a", seen: "newer", equal: ==)
        let dropped = cache.peek("a")
        #expect(dropped == nil)
        // A read still in flight when an uncached one completed may bring an older value: it must not fill.
        guard case .miss(let ticket) = cache.lookup("b") else { Issue.record("expected a miss"); return }
        cache.settle("b", seen: "b", equal: ==)
        let filled = cache.fill(ticket, with: "older")
        #expect(!filled)
    }

    /// Found under load by `readsNeverGoBackInTimeWhileAnotherReplicaWrites` ("read 353 after 354"): a read whose
    /// marker went (here an invalidation; LRU churn does the same) answered Redis's newer value, while a read started
    /// after it, whose GET Redis had answered before the write, still held a live marker and filled the older value
    /// before the write's invalidation arrived. The next hit went back in time.
    @Test func aReadThatCannotFillLeavesNoOlderReadInFlightToFillAfterIt() {
        let cache = RedisAccountCache(capacity: 4, accountKeyPrefix: "tb:account:", metrics: RedisMetrics())
        cache.handle(.established([.integer(7)]))
        let id = Account.make(uid: "monotonic").id
        guard case .miss(let newer) = cache.lookup(id) else { Issue.record("expected a miss"); return }
        cache.handle(.message(channel: RedisAccountCache.channel, payload: .array([.bulk(Array("tb:account:\(id)".utf8))])))
        guard case .miss(let older) = cache.lookup(id) else { Issue.record("expected a miss"); return }
        // Redis answers `older` (scope 353) before the write, `newer` (scope 354) after it; `newer` returns first.
        cache.fill(newer, with: Account.make(uid: "monotonic", scope: "354"))
        cache.fill(older, with: Account.make(uid: "monotonic", scope: "353"))
        #expect(cache.peek(id) == nil, "nothing older than what a read already returned is cached")
        // The same when the newer read was not tracked.
        guard case .miss(let untracked) = cache.lookup(id) else { Issue.record("expected a miss"); return }
        cache.handle(.message(channel: RedisAccountCache.channel, payload: .array([.bulk(Array("tb:account:\(id)".utf8))])))
        guard case .miss(let stale) = cache.lookup(id) else { Issue.record("expected a miss"); return }
        cache.abandon(untracked, seen: Account.make(uid: "monotonic", scope: "356"))
        cache.fill(stale, with: Account.make(uid: "monotonic", scope: "355"))
        #expect(cache.peek(id) == nil)
        // A read that fills with nothing racing it still caches.
        guard case .miss(let alone) = cache.lookup(id) else { Issue.record("expected a miss"); return }
        cache.fill(alone, with: Account.make(uid: "monotonic", scope: "357"))
        #expect(cache.peek(id)??.scope == "357")
    }
}
