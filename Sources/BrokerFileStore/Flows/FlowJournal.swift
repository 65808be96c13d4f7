import BrokerCore
import Glibc

/// The state behind a ``JournalFlowStore``: the pending flows and flow outcomes in memory, and the append-only file that records them.
///
/// Every mutation appends its line with one `write`, and memory changes only
/// when the write succeeded, so memory and file always agree: a take that
/// could not be recorded leaves its flow pending. A failed or short write is
/// cut off again with `ftruncate`; if even that fails the file is rewritten
/// from memory before the next append. The file is rewritten (compacted) once
/// it is both over `compactionThreshold` bytes and mostly dead records.
///
/// The file is opened for each append and closed after it, never held open:
/// a descriptor open for writing would stop the file system from being
/// remounted read-only, and would keep writing to a journal moved away.
/// Not thread-safe: the store keeps it in a `Mutex`.
struct FlowJournal: ~Copyable {
    /// A pending flow and the put line that recorded it; its description names only the state.
    struct Entry: CustomStringConvertible {
        /// The flow as handed back by `take`.
        var flow: PendingFlow
        /// The put line, newline included, copied as is into a rewritten journal.
        var line: [UInt8]

        /// The state and the line's length: the line may hold an unsealed verifier.
        var description: String {
            "FlowJournal.Entry(state: \(flow.state), line: \(line.count) bytes)"
        }
    }

    /// A flow outcome and the line that recorded it.
    struct OutcomeEntry {
        /// The outcome as handed back by `outcome(state:now:)`.
        var outcome: FlowOutcome
        /// The outcome line, newline included, copied as is into a rewritten journal.
        var line: [UInt8]
    }

    /// The journal's path: `<flows directory>/journal.jsonl`.
    let path: String
    /// Whether rewrites are fsynced (file and directory) before they replace the journal.
    let durable: Bool
    /// The size past which a journal made mostly of dead records is rewritten.
    let compactionThreshold: Int
    /// The pending flows by state.
    private(set) var entries: [String: Entry]
    /// The flow outcomes by state, until purged after their `keepUntil`.
    private(set) var outcomes: [String: OutcomeEntry]
    /// The journal's length in bytes, every byte a complete record.
    private(set) var size = 0
    /// The bytes of the put lines of `entries` and the lines of `outcomes`: what a rewrite would keep.
    private var liveBytes = 0
    /// Set when a failed append could not be cut off, so the file must be rewritten before it is trusted.
    private var damaged = false

    /// Writes `entries` and `outcomes` as a fresh journal at `path`, replacing any.
    init(
        path: String, entries: [String: Entry], outcomes: [String: OutcomeEntry] = [:], durable: Bool, compactionThreshold: Int
    ) throws(StoreError) {
        self.path = path
        self.durable = durable
        self.compactionThreshold = compactionThreshold
        self.entries = entries
        self.outcomes = outcomes
        size = try Self.rewrite(path: path, entries: entries, outcomes: outcomes, durable: durable)
        liveBytes = size
    }

    /// Appends a put of `entry`, replacing a pending flow with the same state; true when the journal was then rewritten.
    ///
    /// A rewrite holds the change, so in durable mode it needs no further sync.
    @discardableResult
    mutating func put(_ entry: Entry) throws(StoreError) -> Bool {
        try append(entry.line)
        if let previous = entries.updateValue(entry, forKey: entry.flow.state) { liveBytes -= previous.line.count }
        liveBytes += entry.line.count
        return try compactIfWorthIt()
    }

    /// Appends the line of `entry`, replacing the outcome of its state; true when the journal was then rewritten.
    @discardableResult
    mutating func record(_ entry: OutcomeEntry) throws(StoreError) -> Bool {
        try append(entry.line)
        if let previous = outcomes.updateValue(entry, forKey: entry.outcome.state) { liveBytes -= previous.line.count }
        liveBytes += entry.line.count
        return try compactIfWorthIt()
    }

    /// Forgets the outcomes of `states` in memory; their lines become dead, left out of the next rewrite.
    ///
    /// No line is written: an outcome dropped for age is dropped again when a
    /// replay finds its `keepUntil` passed, and one dropped at the cap is at
    /// worst read again after a restart.
    mutating func forgetOutcomes(_ states: [String]) {
        for state in states {
            if let entry = outcomes.removeValue(forKey: state) { liveBytes -= entry.line.count }
        }
    }

    /// Appends one take line for each pending flow among `states` and removes them; returns the flows removed,
    /// and whether the journal was then rewritten.
    ///
    /// When the write fails nothing is removed: the flows were not used, and
    /// stay pending in memory as in the file.
    mutating func take(_ states: [String]) throws(StoreError) -> (flows: [PendingFlow], rewritten: Bool) {
        var taken: [PendingFlow] = []
        var lines: [UInt8] = []
        for state in states {
            guard let entry = entries[state] else { continue }
            taken.append(entry.flow)
            lines += FlowJournalRecord.encodeTake(state: state)
        }
        guard !lines.isEmpty else { return ([], false) }
        try append(lines)
        for flow in taken {
            if let entry = entries.removeValue(forKey: flow.state) { liveBytes -= entry.line.count }
        }
        return (taken, try compactIfWorthIt())
    }

    /// Appends `bytes` in one write; on failure cuts the file back to its last complete record and throws.
    ///
    /// A journal that vanished (removed by hand) is first rewritten from memory.
    private mutating func append(_ bytes: [UInt8]) throws(StoreError) {
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
    }

    /// Rewrites the journal when it is over the threshold and at least three quarters dead records.
    private mutating func compactIfWorthIt() throws(StoreError) -> Bool {
        guard size >= compactionThreshold, size > 4 * liveBytes else { return false }
        try compact()
        return true
    }

    /// Replaces the journal by one holding only the pending flows' put lines and the outcomes' lines.
    mutating func compact() throws(StoreError) {
        size = try Self.rewrite(path: path, entries: entries, outcomes: outcomes, durable: durable)
        liveBytes = size
        damaged = false
    }

    /// Writes the put lines of `entries` and the lines of `outcomes` to a new file, makes it the journal by rename,
    /// and returns its size.
    ///
    /// ``DurableFile/write(_:to:sync:)``: a crash at any point leaves the old
    /// journal or the new, never a mix; with `durable` both are fsynced.
    private static func rewrite(
        path: String, entries: [String: Entry], outcomes: [String: OutcomeEntry], durable: Bool
    ) throws(StoreError) -> Int {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.values.reduce(0) { $0 + $1.line.count } + outcomes.values.reduce(0) { $0 + $1.line.count })
        for entry in entries.values { bytes += entry.line }
        for entry in outcomes.values { bytes += entry.line }
        try DurableFile.write(bytes, to: path, sync: durable)
        return bytes.count
    }
}
