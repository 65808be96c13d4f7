import BrokerCore
import Glibc

/// An append-only file of records and the in-memory state it describes, kept in step: the one journal the flow store
/// and the webhook outbox are built on.
///
/// Every change appends its lines with one `write`, and the state changes
/// only when the write succeeded, so memory and file always agree. A failed
/// or short write is cut off again with `ftruncate` (``JournalAppend``); if
/// even that fails the file is rewritten from memory before the next append.
/// The file is rewritten (compacted) once it is both over
/// `compactionThreshold` bytes and at least three quarters lines that no
/// longer count; a rewrite goes through ``DurableFile/write(_:to:sync:)``
/// (temporary file, rename), so a crash leaves the old journal or the new.
///
/// The file is opened for each append and closed after it, never held open:
/// a descriptor open for writing would stop the file system from being
/// remounted read-only, and would keep writing to a journal moved away.
/// Not thread-safe: ``Journal`` keeps it behind a lock.
struct JournalLog<State: JournalState>: ~Copyable {
    /// The journal's path.
    let path: String
    /// Whether rewrites are fsynced (file and directory) before they replace the journal.
    let durable: Bool
    /// The size past which a journal made mostly of lines that no longer count is rewritten.
    let compactionThreshold: Int
    /// What the journal's lines describe: a change that is recorded goes through ``append(_:then:)``; one that is never
    /// written (a lease, a place in an index, an outcome forgotten for age) is made here directly.
    var state: State
    /// The journal's length in bytes, every byte a complete record.
    private(set) var size = 0
    /// How many appends succeeded since the journal was opened.
    private(set) var appends: UInt64 = 0
    /// Whether the file was last rewritten with fsync and nothing was appended since: every change so far is durable.
    private(set) var syncedSinceLastAppend = false
    /// Set when a failed append could not be cut off, so the file must be rewritten before it is trusted.
    private var damaged = false

    /// Writes the live lines of `state` as a fresh journal at `path`, replacing any.
    init(path: String, state: State, durable: Bool, compactionThreshold: Int) throws(StoreError) {
        self.path = path
        self.durable = durable
        self.compactionThreshold = compactionThreshold
        self.state = state
        try compact()
    }

    /// Appends `lines` in one write, then applies `change` to the state; rewrites the journal when it is then mostly
    /// lines that no longer count.
    ///
    /// When the write fails `change` is not applied: memory stays as the file is. With no lines, nothing is written
    /// and `change` is applied alone.
    mutating func append<Result>(
        _ lines: [UInt8], then change: (inout State) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        guard !lines.isEmpty else { return try change(&state) }
        try write(lines)
        let result = try change(&state)
        if size >= compactionThreshold, size > 4 * state.liveBytes { try compact() }
        return result
    }

    /// Replaces the journal by one holding only the state's live lines.
    mutating func compact() throws(StoreError) {
        let bytes = state.liveLines()
        try DurableFile.write(bytes, to: path, sync: durable)
        size = bytes.count
        damaged = false
        syncedSinceLastAppend = durable
    }

    /// Writes `bytes` at the end of the file; on failure cuts the file back to its last complete record and throws.
    ///
    /// A journal that vanished (removed by hand) is first rewritten from memory.
    private mutating func write(_ bytes: [UInt8]) throws(StoreError) {
        if damaged { try compact() }
        var descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        if descriptor < 0 && errno == ENOENT {
            try compact()
            descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        }
        guard descriptor >= 0 else { throw .posix("open", path) }
        defer { close(descriptor) }
        try JournalAppend.write(bytes, to: descriptor, path: path, size: size, damaged: &damaged)
        size += bytes.count
        appends += 1
        syncedSinceLastAppend = false
    }
}
