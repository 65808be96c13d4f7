import BrokerCore
import Foundation

/// Shares one fsync among concurrent writers that each need their own change on disk before they answer.
///
/// A writer makes its change (an appended record, a rename), takes a
/// ``ticket()``, and calls ``waitUntilDurable(_:sync:)``. If no sync is running
/// it leads one that covers every ticket issued so far; if one is running, it
/// waits for that to end and then either finds its ticket covered or leads the
/// next. No writer returns before a sync that started after its change ended
/// successfully, so nothing is acknowledged before it is durable; N writers
/// arriving together cost about two syncs instead of N.
///
/// Call it only from threads that may block (``BlockingIO`` lanes).
final class GroupCommit: @unchecked Sendable {
    // @unchecked Sendable: every stored property is read and written only while `condition` is locked.
    private let condition = NSCondition()
    /// The highest ticket handed out.
    private var issued: UInt64 = 0
    /// Every ticket up to this one is durable.
    private var durable: UInt64 = 0
    /// Whether a leader is inside its sync call now.
    private var syncing = false

    /// Creates a group with nothing pending.
    init() {}

    /// A ticket for a change that is already made (written or renamed); pass it to ``waitUntilDurable(_:sync:)``.
    func ticket() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        issued += 1
        return issued
    }

    /// Records that every ticket issued so far is durable by other means (a synced rewrite of the whole file).
    func markAllDurable() {
        condition.lock()
        durable = issued
        condition.broadcast()
        condition.unlock()
    }

    /// Returns once a successful `sync` that started after `ticket` was issued has ended; throws the error of a failed sync this caller led.
    ///
    /// A writer that waited on a failed sync does not inherit its error: it
    /// leads a sync of its own, which succeeds or throws for it.
    func waitUntilDurable(_ ticket: UInt64, sync: () throws(StoreError) -> Void) throws(StoreError) {
        condition.lock()
        while durable < ticket {
            if syncing {
                condition.wait()
                continue
            }
            syncing = true
            let target = issued
            condition.unlock()
            var failure: StoreError?
            do { try sync() } catch { failure = error }
            condition.lock()
            syncing = false
            if failure == nil { durable = max(durable, target) }
            condition.broadcast()
            if let failure {
                condition.unlock()
                throw failure
            }
        }
        condition.unlock()
    }
}
