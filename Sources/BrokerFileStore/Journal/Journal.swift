import BrokerCore
import Glibc
import Synchronization

/// An append-only journal shared by the threads of one store: a ``JournalLog`` behind one lock, and a durable wait whose
/// fdatasyncs concurrent writers share (``GroupCommit``).
///
/// A change is made under the lock with ``change(_:)``, which returns once the
/// line is written (it survives a crash of the process: the page cache
/// outlives it), or ``changeDurably(_:)``, which then, for a durable journal,
/// returns only after an fdatasync of the journal that began after the write.
/// One process owns a data directory, so the lock orders every change of it.
final class Journal<State: JournalState>: Sendable {
    /// The journal's path.
    let path: String
    /// Whether ``changeDurably(_:)`` waits for fdatasync and rewrites are fsynced.
    let durable: Bool
    private let log: Mutex<JournalLog<State>>
    private let commits = GroupCommit()

    /// Writes the live lines of `state` as a fresh journal at `path` (synced when `durable`), replacing any.
    init(path: String, state: State, durable: Bool, compactionThreshold: Int) throws(StoreError) {
        self.path = path
        self.durable = durable
        log = Mutex(try JournalLog(path: path, state: state, durable: durable, compactionThreshold: compactionThreshold))
    }

    /// Reads the journal's state under its lock.
    func read<Result: Sendable>(_ body: (State) -> Result) -> Result {
        log.withLock { (log: inout JournalLog<State>) -> Result in body(log.state) }
    }

    /// Reads or changes the journal under its lock; what `body` appends is written, not synced.
    func change<Result: Sendable>(
        _ body: (inout JournalLog<State>) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        try log.withLock { (log: inout JournalLog<State>) throws(StoreError) -> Result in try body(&log) }
    }

    /// Changes the journal under its lock; when `body` appended to a durable journal, returns only once an fdatasync
    /// that began after the write has ended. Blocks: call it on a ``BlockingIO`` lane.
    func changeDurably<Result: Sendable>(
        _ body: (inout JournalLog<State>) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        let (result, ticket) = try log.withLock { (log: inout JournalLog<State>) throws(StoreError) -> (Result, UInt64?) in
            let before = log.appends
            let result = try body(&log)
            guard durable, log.appends != before else { return (result, nil) }
            let ticket = commits.ticket()
            // A synced rewrite after the last append holds every change so far.
            if log.syncedSinceLastAppend { commits.markAllDurable() }
            return (result, ticket)
        }
        if let ticket { try waitUntilDurable(ticket) }
        return result
    }

    /// Returns once an fdatasync of the journal that began after `ticket` was issued has ended.
    private func waitUntilDurable(_ ticket: UInt64) throws(StoreError) {
        let path = path
        try commits.waitUntilDurable(ticket) { () throws(StoreError) in
            // Whichever file the path names now holds every change up to the ticket:
            // a rewrite that replaced it was itself synced with those changes in it.
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw .posix("open", path) }
            defer { close(descriptor) }
            while fdatasync(descriptor) != 0 {
                if errno == EINTR { continue }
                throw .posix("fdatasync", path)
            }
        }
    }
}
