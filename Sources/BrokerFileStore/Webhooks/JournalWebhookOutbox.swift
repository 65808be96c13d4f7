import BrokerCore
import BrokerCrypto
import Foundation

/// A ``WebhookOutbox`` in the data directory: deliveries in memory, recorded in the append-only journal `<directory>/webhooks/outbox.jsonl`.
///
/// An append returns only after an fdatasync of the journal that began after
/// its write (concurrent appends share those syncs, ``GroupCommit``), so a
/// recorded event survives `kill -9` and power loss. Settling a delivery
/// (done, rescheduled, dropped) is written without a sync: a crash can undo
/// it, and the delivery is then attempted once more, which at-least-once
/// delivery allows. Leases live in memory, since one process owns the data
/// directory: after a restart every pending delivery is due again at its time.
///
/// An event about an account change is written with the change
/// (``JSONFileAccountRepository/update(id:reporting:to:_:)``). Two files cannot
/// share one fsync, so the step is made atomic by protocol: the deliveries are
/// first appended *staged* (naming the account and the SHA-256 of its record's
/// bytes before and after the change, `none` for no record) and synced; then the
/// account's change is appended to the account journal (synced); then a *commit* line is appended without waiting
/// for a sync. A staged delivery is never claimed, listed or counted. An account
/// write that fails appends a done line (abort), synced, instead. At start, a
/// staged delivery with neither is resolved by reading the account's record
/// (``StagedChange/isWritten(in:)``): still as before the change, it is dropped,
/// since the change never became durable and was never acknowledged; otherwise
/// (as after the change, or replaced by a later write) it is committed.
///
/// At start the journal is replayed (a torn last line, a write the crash cut
/// short, is ignored; a damaged line is skipped and counted), staged deliveries
/// are resolved, and the journal is rewritten with the deliveries still
/// pending or kept as dropped.
public final class JournalWebhookOutbox: WebhookOutbox {
    /// The journal's file name inside the webhooks directory.
    public static let journalName = "outbox.jsonl"

    /// The journal's path.
    public let journalPath: String
    /// The data directory whose account store is read to resolve staged deliveries at start.
    public let dataDirectory: String
    /// How many staged deliveries found at start were committed (their change was written) and dropped (it was not).
    public let stagedAtOpen: (committed: Int, dropped: Int)
    /// How many complete lines could not be read at start (skipped).
    public let damagedLinesAtOpen: Int

    private let journal: Journal<OutboxJournal>

    /// Opens the outbox under `directory`, creating `webhooks/` with mode 0700; blocks while it replays, so call it before serving.
    public init(directory: String, compactionThreshold: Int = 4 << 20, now: Date = Date()) throws(StoreError) {
        let (path, bytes) = try JournalFile.open(Self.journalName, in: "webhooks", of: directory)
        journalPath = path
        dataDirectory = directory
        var entries: [String: OutboxJournal.Entry] = [:]
        var damaged = 0
        try JournalFile.forEachLine(in: bytes) { (line: ArraySlice<UInt8>) throws(StoreError) in
            switch OutboxJournalRecord.decode(line) {
            case .put(let delivery)?: entries[delivery.id] = OutboxJournal.Entry(delivery: delivery, line: Array(line) + [0x0A])
            case .stage(let delivery, let change)?:
                entries[delivery.id] = OutboxJournal.Entry(delivery: delivery, line: Array(line) + [0x0A], staged: change)
            case .commit(let id)?:
                if let entry = entries[id], entry.staged != nil {
                    entries[id] = OutboxJournal.Entry(delivery: entry.delivery, line: try OutboxJournalRecord.encodePut(entry.delivery))
                }
            case .done(let id)?: entries[id] = nil
            // Skipping a damaged line can at worst deliver something again, never lose it.
            case nil: damaged += 1
            }
        }
        damagedLinesAtOpen = damaged
        stagedAtOpen = try Self.resolveStaged(&entries, dataDirectory: directory)
        for id in Self.expiredDropped(in: entries, now: now) { entries[id] = nil }
        // Every append that must survive power loss is synced, so the rewrites are too.
        journal = try Journal(path: path, state: OutboxJournal(entries: entries), durable: true, compactionThreshold: compactionThreshold)
    }

    /// Appends a put line for each delivery; returns once an fdatasync that began after the write has ended.
    public func append(_ deliveries: [WebhookDelivery]) async throws(StoreError) {
        guard !deliveries.isEmpty else { return }
        try await BlockingIO.run { () throws(StoreError) in
            try self.journal.changeDurably { (log: inout JournalLog<OutboxJournal>) throws(StoreError) in try log.put(deliveries) }
        }
    }

    /// Appends staged deliveries waiting for `change`; returns once an fdatasync that began after the write has ended.
    func stage(_ deliveries: [WebhookDelivery], for change: StagedChange) async throws(StoreError) {
        guard !deliveries.isEmpty else { return }
        try await BlockingIO.run { () throws(StoreError) in
            try self.journal.changeDurably { (log: inout JournalLog<OutboxJournal>) throws(StoreError) in
                try log.stage(deliveries, for: change)
            }
        }
    }

    /// Appends commit lines for staged deliveries `ids`, not synced: recovery at start reaches the same decision
    /// from the account's record. Memory commits even when the append fails, for the same reason.
    func commit(_ ids: [String]) async {
        _ = try? await BlockingIO.run { () throws(StoreError) in
            try self.journal.change { (log: inout JournalLog<OutboxJournal>) in
                do {
                    try log.commit(ids)
                } catch {
                    for id in ids { try? log.state.markCommitted(id) }
                }
            }
        }
    }

    /// Appends done lines for staged deliveries `ids` whose change failed, and syncs them: a later write of the same
    /// account must not make recovery take the failed change for written.
    func abort(_ ids: [String]) async {
        _ = try? await BlockingIO.run { () throws(StoreError) in
            try self.journal.changeDurably { (log: inout JournalLog<OutboxJournal>) throws(StoreError) in try log.done(ids) }
        }
    }

    /// Rewrites the journal now with the current line of each delivery, staged ones as staged.
    func compact() throws(StoreError) {
        try journal.change { (log: inout JournalLog<OutboxJournal>) throws(StoreError) in try log.compact() }
    }

    /// Decides each staged delivery of `entries` from its account's record: committed when the store shows the change, else removed.
    ///
    /// Reads the account store only when something is staged (after a crash).
    private static func resolveStaged(
        _ entries: inout [String: OutboxJournal.Entry], dataDirectory: String
    ) throws(StoreError) -> (committed: Int, dropped: Int) {
        guard entries.values.contains(where: { $0.staged != nil }) else { return (0, 0) }
        var records: [ExactKey: [UInt8]] = [:]
        for record in try AccountStoreReader.records(in: dataDirectory) { records[ExactKey(record.id)] = record.bytes }
        var committed = 0
        var dropped = 0
        for (id, entry) in entries {
            guard let change = entry.staged else { continue }
            if change.isWritten(in: records[ExactKey(change.account)]) {
                entries[id] = OutboxJournal.Entry(delivery: entry.delivery, line: try OutboxJournalRecord.encodePut(entry.delivery))
                committed += 1
            } else {
                entries[id] = nil
                dropped += 1
            }
        }
        return (committed, dropped)
    }

    /// Leases the earliest due deliveries not leased now, walking the due order from its start; the leases live in memory only.
    ///
    /// A leased delivery is moved in the due order to the end of its lease, and
    /// one a hold sets aside to the end of the hold, so a claim walks only past
    /// what it takes or sets aside.
    public func claim(
        limit: Int, now: Date, lease: Double, holding: [String: WebhookReceiverHold]
    ) async throws(StoreError) -> [WebhookLease] {
        guard limit > 0 else { return [] }
        return try journal.change { (log: inout JournalLog<OutboxJournal>) -> [WebhookLease] in
            var chosen: [WebhookDelivery] = []
            var postponed: [(String, Date)] = []
            var allowance = holding.mapValues(\.leases)
            log.state.index.due.forEachAscending { key in
                guard key.due <= now, let entry = log.state.entries[key.id] else { return false }
                let delivery = entry.delivery
                if let held = log.state.leases[key.id], held.until > now {
                    // Leased, but its place was reset by a change meanwhile: back to the end of the lease.
                    postponed.append((key.id, held.until))
                    return true
                }
                if let hold = holding[delivery.url], delivery.enqueuedAt >= hold.windowEndedBefore {
                    guard let left = allowance[delivery.url], left > 0 else {
                        postponed.append((key.id, max(hold.until, now.addingTimeInterval(0.001))))
                        return true
                    }
                    allowance[delivery.url] = left - 1
                }
                chosen.append(delivery)
                return chosen.count < limit
            }
            for (id, until) in postponed { log.state.postpone(id, until: until) }
            let until = now.addingTimeInterval(lease)
            return chosen.map { delivery in
                let token = SecureRandom.token(byteCount: 12)
                log.state.leases[delivery.id] = (token, until)
                log.state.postpone(delivery.id, until: until)
                return WebhookLease(delivery: delivery, token: token)
            }
        }
    }

    /// Appends a done line and forgets the delivery (not synced: a crash repeats the delivery at worst).
    public func complete(_ lease: WebhookLease) async throws(StoreError) {
        try await perform { (log: inout JournalLog<OutboxJournal>) throws(StoreError) in
            // Delivered is delivered, whoever holds the lease now.
            try log.done([lease.delivery.id])
            log.state.leases[lease.delivery.id] = nil
        }
    }

    /// Appends the updated delivery when the lease is still this one (not synced: a crash brings the attempt forward at worst).
    public func reschedule(_ lease: WebhookLease, as updated: WebhookDelivery) async throws(StoreError) {
        try await perform { (log: inout JournalLog<OutboxJournal>) throws(StoreError) in
            guard log.state.leases[lease.delivery.id]?.token == lease.token, log.state.entries[updated.id] != nil else { return }
            try log.put([updated])
            log.state.leases[lease.delivery.id] = nil
        }
    }

    /// Appends the dropped delivery when the lease is still this one, then forgets dropped deliveries past their keeping.
    public func drop(_ lease: WebhookLease, as updated: WebhookDelivery) async throws(StoreError) {
        try await perform { (log: inout JournalLog<OutboxJournal>) throws(StoreError) in
            guard log.state.leases[lease.delivery.id]?.token == lease.token, log.state.entries[updated.id] != nil else { return }
            try log.put([updated])
            log.state.leases[lease.delivery.id] = nil
            try log.done(Self.expiredDropped(in: log.state.index, now: updated.droppedAt ?? Date()))
        }
    }

    /// A page of pending deliveries earliest due first and of dropped ones latest first, from memory.
    public func list(limit: Int, cursor: WebhookListCursor?) async throws(StoreError) -> WebhookOutboxListing {
        let limit = max(1, limit)
        return journal.read { state in
            let index = state.index
            var next = WebhookListCursor(pending: .end, dropped: .end)
            var pending: [WebhookDelivery] = []
            let pendingFrom = cursor?.pending ?? .start
            if pendingFrom != .end {
                var after: OutboxIndex.ListKey?
                if case .after(let milliseconds, let id) = pendingFrom { after = OutboxIndex.ListKey(milliseconds: milliseconds, id: id) }
                let keys = index.pending.ascending(after: after, limit: limit + 1)
                pending = keys.prefix(limit).compactMap { state.entries[$0.id]?.delivery }
                if keys.count > limit, let last = keys.prefix(limit).last {
                    next.pending = .after(milliseconds: last.milliseconds, id: last.id)
                }
            }
            var dropped: [WebhookDelivery] = []
            let droppedFrom = cursor?.dropped ?? .start
            if droppedFrom != .end {
                var before: OutboxIndex.ListKey?
                if case .after(let milliseconds, let id) = droppedFrom { before = OutboxIndex.ListKey(milliseconds: milliseconds, id: id) }
                let keys = index.dropped.descending(before: before, limit: limit + 1)
                dropped = keys.prefix(limit).compactMap { state.entries[$0.id]?.delivery }
                if keys.count > limit, let last = keys.prefix(limit).last {
                    next.dropped = .after(milliseconds: last.milliseconds, id: last.id)
                }
            }
            return WebhookOutboxListing(
                pending: pending, dropped: dropped, stats: Self.stats(of: state),
                next: next == WebhookListCursor(pending: .end, dropped: .end) ? nil : next)
        }
    }

    /// Appends the replayed deliveries and syncs: an operator was told it is done.
    public func replay(id: String, now: Date) async throws(StoreError) -> Int {
        let ids = OutboxJournalRecord.isDeliveryID(id) ? [id] : WebhookDelivery.ids(ofEvent: id)
        return try await BlockingIO.run { () throws(StoreError) -> Int in
            try self.journal.changeDurably { (log: inout JournalLog<OutboxJournal>) throws(StoreError) -> Int in
                var replayed: [WebhookDelivery] = []
                for id in ids {
                    guard let entry = log.state.entries[id], entry.staged == nil else { continue }
                    var delivery = entry.delivery
                    delivery.attempts = 0
                    delivery.droppedAt = nil
                    delivery.enqueuedAt = now
                    delivery.nextAttemptAt = now
                    replayed.append(delivery)
                    // An attempt in flight settles into nothing: its lease is gone.
                    log.state.leases[id] = nil
                }
                try log.put(replayed)
                return replayed.count
            }
        }
    }

    /// Counts from memory.
    public func stats() async throws(StoreError) -> WebhookOutboxStats {
        journal.read { Self.stats(of: $0) }
    }

    /// The counts of the index and the oldest pending enqueue time.
    private static func stats(of journal: OutboxJournal) -> WebhookOutboxStats {
        WebhookOutboxStats(
            pending: journal.index.pending.count, dropped: journal.index.dropped.count,
            oldestPendingEnqueuedAt: journal.index.enqueued.first?.date)
    }

    /// The dropped deliveries past their keeping time, and the oldest beyond the number kept, from the index.
    private static func expiredDropped(in index: OutboxIndex, now: Date) -> [String] {
        let cutoff = WebhookDelivery.milliseconds(now.addingTimeInterval(-WebhookRetention.droppedFor))
        let beyond = max(0, index.dropped.count - WebhookRetention.droppedCount)
        var expired: [String] = []
        index.dropped.forEachAscending { key in
            guard expired.count < beyond || key.milliseconds < cutoff else { return false }
            expired.append(key.id)
            return true
        }
        return expired
    }

    /// The dropped deliveries past their keeping time, and the oldest beyond the number kept (at start).
    private static func expiredDropped(in entries: [String: OutboxJournal.Entry], now: Date) -> [String] {
        let dropped = entries.values.compactMap { entry in entry.delivery.droppedAt.map { ($0, entry.delivery.id) } }
            .sorted { $0 > $1 }
        let cutoff = now.addingTimeInterval(-WebhookRetention.droppedFor)
        return dropped.enumerated().filter { index, item in index >= WebhookRetention.droppedCount || item.0 < cutoff }.map(\.element.1)
    }

    /// Runs a change that needs no sync under the lock, on a ``BlockingIO`` lane: it may rewrite the journal.
    private func perform(
        _ body: @escaping @Sendable (inout JournalLog<OutboxJournal>) throws(StoreError) -> Void
    ) async throws(StoreError) {
        try await BlockingIO.run { () throws(StoreError) in try self.journal.change(body) }
    }
}
