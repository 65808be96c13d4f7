import BrokerCore
import BrokerCrypto
import Foundation
import Glibc
import Synchronization

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

    private struct State: ~Copyable {
        var journal: OutboxJournal
        /// The lease of each delivery being attempted: its token and when it runs out.
        var leases: [String: (token: String, until: Date)] = [:]
    }

    private let state: Mutex<State>
    private let commits = GroupCommit()

    /// Opens the outbox under `directory`, creating `webhooks/` with mode 0700; blocks while it replays, so call it before serving.
    public init(directory: String, compactionThreshold: Int = 4 << 20, now: Date = Date()) throws(StoreError) {
        try DataDirectory.prepare(directory)
        let webhooksDirectory = directory + "/webhooks"
        try DataDirectory.prepare(webhooksDirectory)
        journalPath = webhooksDirectory + "/" + Self.journalName
        dataDirectory = directory
        DurableFile.removeStaleTemporaries(in: webhooksDirectory)
        var entries: [String: OutboxJournal.Entry] = [:]
        var damaged = 0
        let bytes = try DurableFile.read(journalPath) ?? []
        var start = 0
        while let end = bytes[start...].firstIndex(of: 0x0A) {
            let line = bytes[start..<end]
            start = end + 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
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
        state = Mutex(State(journal: try OutboxJournal(path: journalPath, entries: entries, compactionThreshold: compactionThreshold)))
    }

    /// Appends a put line for each delivery; returns once an fdatasync that began after the write has ended.
    public func append(_ deliveries: [WebhookDelivery]) async throws(StoreError) {
        guard !deliveries.isEmpty else { return }
        try await BlockingIO.run { () throws(StoreError) in
            let ticket = try self.state.withLock { (state: inout State) throws(StoreError) -> UInt64 in
                let rewritten = try state.journal.put(deliveries)
                let ticket = self.commits.ticket()
                // A rewrite was synced with every change so far in it.
                if rewritten { self.commits.markAllDurable() }
                return ticket
            }
            try self.waitUntilDurable(ticket)
        }
    }

    /// Appends staged deliveries waiting for `change`; returns once an fdatasync that began after the write has ended.
    func stage(_ deliveries: [WebhookDelivery], for change: StagedChange) async throws(StoreError) {
        guard !deliveries.isEmpty else { return }
        try await BlockingIO.run { () throws(StoreError) in
            let ticket = try self.state.withLock { (state: inout State) throws(StoreError) -> UInt64 in
                let rewritten = try state.journal.stage(deliveries, for: change)
                let ticket = self.commits.ticket()
                if rewritten { self.commits.markAllDurable() }
                return ticket
            }
            try self.waitUntilDurable(ticket)
        }
    }

    /// Appends commit lines for staged deliveries `ids`, not synced: recovery at start reaches the same decision
    /// from the account's record. Memory commits even when the append fails, for the same reason.
    func commit(_ ids: [String]) async {
        _ = try? await BlockingIO.run { () throws(StoreError) in
            self.state.withLock { (state: inout State) in
                do {
                    try state.journal.commit(ids)
                } catch {
                    for id in ids { try? state.journal.markCommitted(id) }
                }
            }
        }
    }

    /// Appends done lines for staged deliveries `ids` whose change failed, and syncs them: a later write of the same
    /// account must not make recovery take the failed change for written.
    func abort(_ ids: [String]) async {
        _ = try? await BlockingIO.run { () throws(StoreError) in
            let ticket = try self.state.withLock { (state: inout State) throws(StoreError) -> UInt64 in
                let rewritten = try state.journal.done(ids)
                let ticket = self.commits.ticket()
                if rewritten { self.commits.markAllDurable() }
                return ticket
            }
            try self.waitUntilDurable(ticket)
        }
    }

    /// Rewrites the journal now with the current line of each delivery, staged ones as staged.
    func compact() throws(StoreError) {
        try state.withLock { (state: inout State) throws(StoreError) in try state.journal.compact() }
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
        return state.withLock { state in
            var chosen: [WebhookDelivery] = []
            var postponed: [(String, Date)] = []
            var allowance = holding.mapValues(\.leases)
            state.journal.index.due.forEachAscending { key in
                guard key.due <= now, let entry = state.journal.entries[key.id] else { return false }
                let delivery = entry.delivery
                if let held = state.leases[key.id], held.until > now {
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
            for (id, until) in postponed { state.journal.postpone(id, until: until) }
            let until = now.addingTimeInterval(lease)
            return chosen.map { delivery in
                let token = SecureRandom.token(byteCount: 12)
                state.leases[delivery.id] = (token, until)
                state.journal.postpone(delivery.id, until: until)
                return WebhookLease(delivery: delivery, token: token)
            }
        }
    }

    /// Appends a done line and forgets the delivery (not synced: a crash repeats the delivery at worst).
    public func complete(_ lease: WebhookLease) async throws(StoreError) {
        try await perform { (state: inout State) throws(StoreError) in
            // Delivered is delivered, whoever holds the lease now.
            try state.journal.done([lease.delivery.id])
            state.leases[lease.delivery.id] = nil
        }
    }

    /// Appends the updated delivery when the lease is still this one (not synced: a crash brings the attempt forward at worst).
    public func reschedule(_ lease: WebhookLease, as updated: WebhookDelivery) async throws(StoreError) {
        try await perform { (state: inout State) throws(StoreError) in
            guard state.leases[lease.delivery.id]?.token == lease.token, state.journal.entries[updated.id] != nil else { return }
            try state.journal.put([updated])
            state.leases[lease.delivery.id] = nil
        }
    }

    /// Appends the dropped delivery when the lease is still this one, then forgets dropped deliveries past their keeping.
    public func drop(_ lease: WebhookLease, as updated: WebhookDelivery) async throws(StoreError) {
        try await perform { (state: inout State) throws(StoreError) in
            guard state.leases[lease.delivery.id]?.token == lease.token, state.journal.entries[updated.id] != nil else { return }
            try state.journal.put([updated])
            state.leases[lease.delivery.id] = nil
            try state.journal.done(Self.expiredDropped(in: state.journal.index, now: updated.droppedAt ?? Date()))
        }
    }

    /// A page of pending deliveries earliest due first and of dropped ones latest first, from memory.
    public func list(limit: Int, cursor: WebhookListCursor?) async throws(StoreError) -> WebhookOutboxListing {
        let limit = max(1, limit)
        return state.withLock { state in
            let index = state.journal.index
            var next = WebhookListCursor(pending: .end, dropped: .end)
            var pending: [WebhookDelivery] = []
            let pendingFrom = cursor?.pending ?? .start
            if pendingFrom != .end {
                var after: OutboxIndex.ListKey?
                if case .after(let milliseconds, let id) = pendingFrom { after = OutboxIndex.ListKey(milliseconds: milliseconds, id: id) }
                let keys = index.pending.ascending(after: after, limit: limit + 1)
                pending = keys.prefix(limit).compactMap { state.journal.entries[$0.id]?.delivery }
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
                dropped = keys.prefix(limit).compactMap { state.journal.entries[$0.id]?.delivery }
                if keys.count > limit, let last = keys.prefix(limit).last {
                    next.dropped = .after(milliseconds: last.milliseconds, id: last.id)
                }
            }
            return WebhookOutboxListing(
                pending: pending, dropped: dropped, stats: Self.stats(of: state.journal),
                next: next == WebhookListCursor(pending: .end, dropped: .end) ? nil : next)
        }
    }

    /// Appends the replayed deliveries and syncs: an operator was told it is done.
    public func replay(id: String, now: Date) async throws(StoreError) -> Int {
        let ids = OutboxJournalRecord.isDeliveryID(id) ? [id] : WebhookDelivery.ids(ofEvent: id)
        return try await BlockingIO.run { () throws(StoreError) -> Int in
            let (count, ticket) = try self.state.withLock { (state: inout State) throws(StoreError) -> (Int, UInt64) in
                var replayed: [WebhookDelivery] = []
                for id in ids {
                    guard let entry = state.journal.entries[id], entry.staged == nil else { continue }
                    var delivery = entry.delivery
                    delivery.attempts = 0
                    delivery.droppedAt = nil
                    delivery.enqueuedAt = now
                    delivery.nextAttemptAt = now
                    replayed.append(delivery)
                    // An attempt in flight settles into nothing: its lease is gone.
                    state.leases[id] = nil
                }
                guard !replayed.isEmpty else { return (0, 0) }
                let rewritten = try state.journal.put(replayed)
                let ticket = self.commits.ticket()
                if rewritten { self.commits.markAllDurable() }
                return (replayed.count, ticket)
            }
            if count > 0 { try self.waitUntilDurable(ticket) }
            return count
        }
    }

    /// Counts from memory.
    public func stats() async throws(StoreError) -> WebhookOutboxStats {
        state.withLock { Self.stats(of: $0.journal) }
    }

    /// The counts of the index and the oldest pending enqueue time.
    private static func stats(of journal: borrowing OutboxJournal) -> WebhookOutboxStats {
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
    private func perform(_ body: @escaping @Sendable (inout State) throws(StoreError) -> Void) async throws(StoreError) {
        try await BlockingIO.run { () throws(StoreError) in
            try self.state.withLock { (state: inout State) throws(StoreError) in try body(&state) }
        }
    }

    /// Returns once an fdatasync of the journal that began after `ticket` was issued has ended.
    private func waitUntilDurable(_ ticket: UInt64) throws(StoreError) {
        let path = journalPath
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
