import BrokerCore
import Dispatch
import Glibc
import Synchronization

/// The write side of the account store: appends changes to the newest journal, group-commits them, and compacts.
///
/// Every change is one line appended with one `write` under a lock, and
/// acknowledged only after an `fdatasync` that began after it
/// (``GroupCommit``): writers arriving together share one. The lock also
/// keeps, per account, where its latest record lies (``RecordLocation``), so
/// a compaction or a backup copies records byte for byte, sealed as they are,
/// without decoding any, and an event's fingerprint reads exactly the
/// record on disk.
///
/// Compaction opens the next journal for appends, then writes every
/// account's latest record into a new snapshot (temporary file, fsync,
/// rename, directory fsync) and deletes the journals it holds. A crash at
/// any step leaves files that replay to the same accounts.
final class AccountJournal: Sendable {
    /// The data directory holding the snapshot and the journals.
    let directory: String
    /// The smallest journal size that makes a compaction worth it.
    let compactionThreshold: Int

    private struct State: ~Copyable {
        var generation: Int
        /// The newest journal, appended to.
        var current: AccountStoreFile
        var size: Int
        /// Set when a failed append could not be cut back: the file is cut back before the next append.
        var damaged = false
        var snapshotSize: Int
        /// The snapshot and every journal by number.
        var files: [UInt32: AccountStoreFile]
        var locations: RecordLocations
        var nextNumber: UInt32
        var compacting = false
    }

    private let state: Mutex<State>
    private let commits = GroupCommit()
    private let compactions = DispatchQueue(label: "token-broker.accounts.compaction", qos: .utility)
    /// Called with the error of a background compaction that failed (it is retried after the next appends).
    let onCompactionFailure: Mutex<(@Sendable (StoreError) -> Void)?> = Mutex(nil)

    /// Takes over the files start-up loaded.
    init(directory: String, loaded: AccountStoreLoader.Loaded, nextNumber: UInt32, compactionThreshold: Int) {
        self.directory = directory
        self.compactionThreshold = compactionThreshold
        var files: [UInt32: AccountStoreFile] = [:]
        if let snapshot = loaded.snapshot { files[snapshot.file.number] = snapshot.file }
        for journal in loaded.journals { files[journal.file.number] = journal.file }
        let newest = loaded.journals[loaded.journals.count - 1]
        state = Mutex(
            State(
                generation: newest.generation, current: newest.file, size: newest.size, snapshotSize: loaded.snapshot?.size ?? 0,
                files: files, locations: loaded.locations, nextNumber: nextNumber))
    }

    /// The newest journal's generation and size, and the snapshot's size.
    var sizes: (generation: Int, journal: Int, snapshot: Int) {
        state.withLock { ($0.generation, $0.size, $0.snapshotSize) }
    }

    /// Appends a put of `record` (compact JSON) for account `id`; returns once it is durable. Blocks: call on a ``BlockingIO`` lane.
    func put(_ record: [UInt8], id: String) throws(StoreError) {
        try append(AccountStoreFormat.putLine(record), id: id, recordLength: record.count)
    }

    /// Appends a delete of account `id`; returns once it is durable. Blocks: call on a ``BlockingIO`` lane.
    func delete(id: String) throws(StoreError) {
        try append(AccountStoreFormat.deleteLine(id), id: id, recordLength: nil)
    }

    private func append(_ line: [UInt8], id: String, recordLength: Int?) throws(StoreError) {
        let (ticket, due) = try state.withLock { (state: inout State) throws(StoreError) -> (UInt64, Bool) in
            let file = state.current
            // Opened for this append only: a descriptor held open for writing would keep the file system from being
            // remounted read-only.
            let writer = open(file.path, O_WRONLY | O_APPEND | O_CLOEXEC)
            guard writer >= 0 else { throw .posix("open", file.path) }
            defer { close(writer) }
            if state.damaged {
                guard ftruncate(writer, off_t(state.size)) == 0 else { throw .posix("cut back", file.path) }
                state.damaged = false
            }
            try JournalAppend.write(line, to: writer, path: file.path, size: state.size, damaged: &state.damaged)
            let key = ExactKey(id)
            if let recordLength {
                let offset = state.size + AccountStoreFormat.putPrefix.count
                state.locations[key] = RecordLocation(file: file.number, length: UInt32(recordLength), offset: offset)
            } else {
                state.locations[key] = nil
            }
            state.size += line.count
            let due = !state.compacting && state.size >= max(compactionThreshold, state.snapshotSize / 4)
            if due { state.compacting = true }
            return (commits.ticket(), due)
        }
        try commits.waitUntilDurable(ticket) { () throws(StoreError) in
            let file = state.withLock { $0.current }
            guard fdatasync(file.descriptor) == 0 else { throw .posix("fdatasync", file.path) }
        }
        if due { compactions.async { self.compactInBackground() } }
    }

    /// The latest record of account `id` as it lies on disk (compact JSON), or nil when there is none.
    func record(id: String) throws(StoreError) -> [UInt8]? {
        let found = state.withLock { state -> (AccountStoreFile, RecordLocation)? in
            guard let location = state.locations[ExactKey(id)], let file = state.files[location.file] else { return nil }
            return (file, location)
        }
        guard let (file, location) = found else { return nil }
        return try file.read(offset: location.offset, length: Int(location.length))
    }

    /// Compacts now, waiting for a compaction already running; for tests, benchmarks and shutdown.
    func compact() throws(StoreError) {
        let result: Result<Void, StoreError> = compactions.sync {
            state.withLock { $0.compacting = true }
            return Result { () throws(StoreError) in try self.runCompaction() }
        }
        try result.get()
    }

    private func compactInBackground() {
        do throws(StoreError) {
            try runCompaction()
        } catch {
            onCompactionFailure.withLock { $0 }?(error)
        }
    }

    /// One compaction (on the compaction queue): rotate, write the snapshot, switch to it, delete what it replaced.
    private func runCompaction() throws(StoreError) {
        defer { state.withLock { $0.compacting = false } }
        // 1. Every line so far is synced and later appends go to the next journal.
        let (generation, captured, files) = try state.withLock {
            (state: inout State) throws(StoreError) -> (Int, RecordLocations, [UInt32: AccountStoreFile]) in
            guard fdatasync(state.current.descriptor) == 0 else { throw .posix("fdatasync", state.current.path) }
            commits.markAllDurable()
            let next = state.generation + 1
            state.nextNumber += 1
            let file = try AccountStoreLoader.createJournal(
                directory + "/" + AccountStoreFormat.journalName(next), number: state.nextNumber)
            try DurableFile.syncDirectory(directory)
            state.files[file.number] = file
            state.current = file
            state.generation = next
            state.size = 0
            state.damaged = false
            return (next, state.locations, state.files)
        }
        // 2. The snapshot of everything before that journal.
        let number = state.withLock { state -> UInt32 in
            state.nextNumber += 1
            return state.nextNumber
        }
        let written = try AccountSnapshotWriter.write(
            captured, from: files, to: directory + "/" + AccountStoreFormat.snapshotName, journal: generation, number: number,
            keepOpen: true)
        // 3. Records still where the snapshot found them now read from it.
        state.withLock { state in
            state.locations = state.locations.rebased(on: written.locations, capturedAs: captured)
            state.files = state.files.filter { $0.value.number == state.current.number }
            if let file = written.file { state.files[file.number] = file }
            state.snapshotSize = written.bytes
        }
        // 4. The journals the snapshot holds are leftovers now; start-up would delete them too.
        for name in (try? DirectoryListing.names(in: directory)) ?? [] {
            if let old = AccountStoreFormat.journalGeneration(name), old < generation { unlink(directory + "/" + name) }
        }
    }

    /// Writes a snapshot of every account as of now to `path` (temporary file, fsync, rename, directory fsync) while appends go on.
    func backup(to path: String) throws(StoreError) -> (accounts: Int, bytes: Int) {
        let (captured, files) = state.withLock { ($0.locations, $0.files) }
        let written = try AccountSnapshotWriter.write(captured, from: files, to: path, journal: 1, number: 0, keepOpen: false)
        return (written.count, written.bytes)
    }
}
