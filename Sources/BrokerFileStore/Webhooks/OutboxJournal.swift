import BrokerCore
import Foundation

/// What the webhook outbox journal records: the deliveries of a ``JournalWebhookOutbox`` not yet done, each with the
/// line that recorded its current state, the orders read from them, and the leases held in memory only.
///
/// A rewrite keeps the current put (or stage) line of each delivery, earliest enqueued first.
struct OutboxJournal: JournalState {
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

    /// The deliveries pending or dropped, by id.
    private(set) var entries: [String: Entry]
    /// The orders of `entries` that claims, listings and counts read.
    private(set) var index: OutboxIndex
    /// The lease of each delivery being attempted: its token and when it runs out. Never written.
    var leases: [String: (token: String, until: Date)] = [:]
    /// The bytes of the put lines of `entries`: what a rewrite keeps.
    private(set) var liveBytes: Int

    /// The state of a journal holding `entries`.
    init(entries: [String: Entry]) {
        self.entries = entries
        index = OutboxIndex(entries)
        liveBytes = entries.values.reduce(0) { $0 + $1.line.count }
    }

    /// The put lines of `entries`, earliest enqueued first.
    func liveLines() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(liveBytes)
        let ordered = entries.values.sorted { ($0.delivery.enqueuedAt, $0.delivery.id) < ($1.delivery.enqueuedAt, $1.delivery.id) }
        for entry in ordered { bytes += entry.line }
        return bytes
    }

    /// Keeps each of `added` as the live entry of its delivery.
    mutating func keep(_ added: [Entry]) {
        for entry in added {
            let previous = entries.updateValue(entry, forKey: entry.delivery.id)
            if let previous { liveBytes -= previous.line.count }
            liveBytes += entry.line.count
            index.update(from: previous, to: entry)
        }
    }

    /// Makes staged delivery `id` deliverable, its line the plain put a rewrite keeps.
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

    /// Forgets the deliveries `ids`.
    mutating func remove(_ ids: [String]) {
        for id in ids {
            if let entry = entries.removeValue(forKey: id) {
                liveBytes -= entry.line.count
                index.update(from: entry, to: nil)
            }
        }
    }

    /// Makes pending delivery `id` claimable only from `date` on (a lease, or a receiver's hold); nothing is written.
    mutating func postpone(_ id: String, until date: Date) {
        index.postpone(id, until: date)
    }
}

extension JournalLog where State == OutboxJournal {
    /// Appends a put of each delivery, replacing earlier states of the same ids.
    mutating func put(_ deliveries: [WebhookDelivery]) throws(StoreError) {
        var lines: [UInt8] = []
        var added: [OutboxJournal.Entry] = []
        for delivery in deliveries {
            let line = try OutboxJournalRecord.encodePut(delivery)
            lines += line
            added.append(OutboxJournal.Entry(delivery: delivery, line: line))
        }
        try append(lines) { $0.keep(added) }
    }

    /// Appends a stage line for each delivery, waiting for `change`.
    mutating func stage(_ deliveries: [WebhookDelivery], for change: StagedChange) throws(StoreError) {
        var lines: [UInt8] = []
        var added: [OutboxJournal.Entry] = []
        for delivery in deliveries {
            let (line, put) = try OutboxJournalRecord.encodeStage(delivery, change)
            lines += line
            added.append(OutboxJournal.Entry(delivery: delivery, line: line, staged: change, putStart: line.count - put.count + 1))
        }
        try append(lines) { $0.keep(added) }
    }

    /// Appends a commit line for each of `ids` still staged, which may then be delivered.
    mutating func commit(_ ids: [String]) throws(StoreError) {
        let staged = ids.filter { state.entries[$0]?.staged != nil }
        guard !staged.isEmpty else { return }
        try append(staged.flatMap(OutboxJournalRecord.encodeCommit)) { (state: inout OutboxJournal) throws(StoreError) in
            for id in staged { try state.markCommitted(id) }
        }
    }

    /// Appends a done line for each of `ids` that is present and forgets them.
    mutating func done(_ ids: [String]) throws(StoreError) {
        let present = ids.filter { state.entries[$0] != nil }
        guard !present.isEmpty else { return }
        try append(present.flatMap(OutboxJournalRecord.encodeDone)) { $0.remove(present) }
    }
}
