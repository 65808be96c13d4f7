import Foundation
import Synchronization
import Testing

@testable import BrokerCore
@testable import BrokerFileStore

/// Group commit: writers share syncs, and none returns before a sync that began after its change.
struct GroupCommitTests {
    /// Runs `count` writers on threads of their own (they block) and waits for all of them.
    static func writers(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for index in 0..<count {
                group.enter()
                Thread {
                    body(index); group.leave()
                }.start()
            }
            group.notify(queue: .global()) { continuation.resume() }
        }
    }

    @Test func sixteenWritersArrivingTogetherShareTwoSyncs() async {
        let group = GroupCommit()
        let issued = Atomic<Int>(0)
        let syncs = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        await Self.writers(16) { _ in
            let ticket = group.ticket()
            issued.add(1, ordering: .sequentiallyConsistent)
            do {
                try group.waitUntilDurable(ticket) { () throws(StoreError) in
                    // The first sync lasts until every writer holds a ticket, so all the rest wait for one more.
                    if syncs.add(1, ordering: .sequentiallyConsistent).newValue == 1 {
                        while issued.load(ordering: .sequentiallyConsistent) < 16 { usleep(1000) }
                    }
                }
            } catch {
                failures.add(1, ordering: .relaxed)
            }
        }
        #expect(syncs.load(ordering: .relaxed) == 2)
        #expect(failures.load(ordering: .relaxed) == 0)
    }

    @Test func noWriterReturnsBeforeASyncThatStartedAfterItsChange() async {
        let group = GroupCommit()
        let changes = Atomic<Int>(0)
        // The number of changes every completed sync covered: the count when it started.
        let covered = Mutex<Int>(0)
        let violations = Atomic<Int>(0)
        await Self.writers(12) { _ in
            for _ in 0..<20 {
                let mine = changes.add(1, ordering: .sequentiallyConsistent).newValue
                let ticket = group.ticket()
                try? group.waitUntilDurable(ticket) { () throws(StoreError) in
                    let start = changes.load(ordering: .sequentiallyConsistent)
                    usleep(200)
                    covered.withLock { $0 = max($0, start) }
                }
                if covered.withLock({ $0 }) < mine { violations.add(1, ordering: .relaxed) }
            }
        }
        #expect(violations.load(ordering: .relaxed) == 0)
    }

    @Test func aFailedSyncThrowsToItsLeaderAndTheOthersSyncAgain() async {
        let group = GroupCommit()
        let issued = Atomic<Int>(0)
        let attempts = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        await Self.writers(6) { _ in
            let ticket = group.ticket()
            issued.add(1, ordering: .sequentiallyConsistent)
            do {
                try group.waitUntilDurable(ticket) { () throws(StoreError) in
                    if attempts.add(1, ordering: .sequentiallyConsistent).newValue == 1 {
                        while issued.load(ordering: .sequentiallyConsistent) < 6 { usleep(1000) }
                        throw .unavailable("fsync failed")
                    }
                }
            } catch {
                failures.add(1, ordering: .relaxed)
            }
        }
        #expect(failures.load(ordering: .relaxed) == 1)
        #expect(attempts.load(ordering: .relaxed) == 2)
    }
}
