import BrokerCore
import Foundation
import Glibc

/// The state behind a ``JournalWebhookOutbox``: the deliveries not yet done, in memory, and the append-only file that records them.
///
/// Every change appends its line with one `write`, and memory changes only
/// when the write succeeded. A failed or short write is cut off again with
/// `ftruncate`; if even that fails the file is rewritten from memory before
/// the next append. The file is rewritten (compacted) once it is over
/// `compactionThreshold` bytes and mostly lines that no longer count. Like the
/// flow journal, the file is opened for each append and never held open.
/// Not thread-safe: the outbox keeps it in a `Mutex`.
struct OutboxJournal: ~Copyable {
    /// A delivery and the put line that recorded its current state.
    struct Entry {
        /// The delivery as it stands.
        var delivery: WebhookDelivery
        /// Its latest put (or stage) line, newline included, copied as is into a rewritten journal.
        var line: [UInt8]
        /// The account change a staged delivery waits for; nil once it may be delivered.
        var staged: StagedChange? = nil
        /// Where in a stage line written by this process its put record begins (after `{"stage":…,`), so a
        /// commit turns it into a put line without encoding the delivery again.
        var putStart: Int? = nil
    }

    /// The journal's path: `<webhooks directory>/outbox.jsonl`.
    let path: String
    /// The size past which a journal made mostly of lines that no longer count is rewritten.
    let compactionThreshold: Int
    /// The deliveries pending or dropped, by id.
    private(set) var entries: [String: Entry]
    /// The orders of `entries` that claims, listings and counts read.
    private(set) var index: OutboxIndex
    /// The journal's length in bytes, every byte a complete record.
    private(set) var size = 0
    /// The bytes of the put lines of `entries`: what a rewrite would keep.
    private var liveBytes = 0
    /// Set when a failed append could not be cut off, so the file must be rewritten before it is trusted.
    private var damaged = false

    /// Writes `entries` as a fresh journal at `path` (synced), replacing any.
    init(path: String, entries: [String: Entry], compactionThreshold: Int) throws(StoreError) {
        self.path = path
        self.compactionThreshold = compactionThreshold
        self.entries = entries
        index = OutboxIndex(entries)
        size = try Self.rewrite(path: path, entries: entries)
        liveBytes = size
    }

    /// Appends a put of each delivery, replacing earlier states of the same ids; true when the journal was then rewritten.
    @discardableResult
    mutating func put(_ deliveries: [WebhookDelivery]) throws(StoreError) -> Bool {
        var lines: [UInt8] = []
        var added: [Entry] = []
        for delivery in deliveries {
            let line = try OutboxJournalRecord.encodePut(delivery)
            lines += line
            added.append(Entry(delivery: delivery, line: line))
        }
        return try appendEntries(added, lines: lines)
    }

    /// Appends a stage line for each delivery, waiting for `change`; true when the journal was then rewritten.
    @discardableResult
    mutating func stage(_ deliveries: [WebhookDelivery], for change: StagedChange) throws(StoreError) -> Bool {
        var lines: [UInt8] = []
        var added: [Entry] = []
        for delivery in deliveries {
            let (line, put) = try OutboxJournalRecord.encodeStage(delivery, change)
            lines += line
            added.append(Entry(delivery: delivery, line: line, staged: change, putStart: line.count - put.count + 1))
        }
        return try appendEntries(added, lines: lines)
    }

    /// Appends `lines` (the lines of `added`), then keeps `added` as the live entries of their deliveries; true when
    /// the journal was then rewritten.
    private mutating func appendEntries(_ added: [Entry], lines: [UInt8]) throws(StoreError) -> Bool {
        guard !lines.isEmpty else { return false }
        try append(lines)
        for entry in added {
            let previous = entries.updateValue(entry, forKey: entry.delivery.id)
            if let previous { liveBytes -= previous.line.count }
            liveBytes += entry.line.count
            index.update(from: previous, to: entry)
        }
        return try compactIfWorthIt()
    }

    /// Appends a commit line for each of `ids` still staged, which may then be delivered; true when the journal was then rewritten.
    @discardableResult
    mutating func commit(_ ids: [String]) throws(StoreError) -> Bool {
        let staged = ids.filter { entries[$0]?.staged != nil }
        guard !staged.isEmpty else { return false }
        try append(staged.flatMap(OutboxJournalRecord.encodeCommit))
        for id in staged { try markCommitted(id) }
        return try compactIfWorthIt()
    }

    /// Makes staged delivery `id` deliverable in memory, its line the plain put a rewrite keeps.
    mutating func markCommitted(_ id: String) throws(StoreError) {
        guard let previous = entries[id], previous.staged != nil else { return }
        var entry = previous
        let line: [UInt8]
        if let start = entry.putStart {
            line = [UInt8(ascii: "{")] + entry.line[start...]
        } else {
            line = try OutboxJournalRecord.encodePut(entry.delivery)
        }
        liveBytes += line.count - entry.line.count
        entry.line = line
        entry.staged = nil
        entry.putStart = nil
        entries[id] = entry
        index.update(from: previous, to: entry)
    }

    /// Appends a done line for each of `ids` that is present and forgets them; true when the journal was then rewritten.
    @discardableResult
    mutating func done(_ ids: [String]) throws(StoreError) -> Bool {
        let present = ids.filter { entries[$0] != nil }
        guard !present.isEmpty else { return false }
        try append(present.flatMap(OutboxJournalRecord.encodeDone))
        for id in present {
            if let entry = entries.removeValue(forKey: id) {
                liveBytes -= entry.line.count
                index.update(from: entry, to: nil)
            }
        }
        return try compactIfWorthIt()
    }

    /// Makes pending delivery `id` claimable only from `date` on (a lease, or a receiver's hold); nothing is written.
    mutating func postpone(_ id: String, until date: Date) {
        index.postpone(id, until: date)
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

    /// Rewrites the journal when it is over the threshold and at least three quarters lines that no longer count.
    private mutating func compactIfWorthIt() throws(StoreError) -> Bool {
        guard size >= compactionThreshold, size > 4 * liveBytes else { return false }
        try compact()
        return true
    }

    /// Replaces the journal by one holding only the current put line of each delivery.
    mutating func compact() throws(StoreError) {
        size = try Self.rewrite(path: path, entries: entries)
        liveBytes = size
        damaged = false
    }

    /// Writes the put lines of `entries`, earliest enqueued first, to a new synced file that replaces the journal by rename.
    private static func rewrite(path: String, entries: [String: Entry]) throws(StoreError) -> Int {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.values.reduce(0) { $0 + $1.line.count })
        let ordered = entries.values.sorted { ($0.delivery.enqueuedAt, $0.delivery.id) < ($1.delivery.enqueuedAt, $1.delivery.id) }
        for entry in ordered { bytes += entry.line }
        try DurableFile.write(bytes, to: path, sync: true)
        return bytes.count
    }
}
