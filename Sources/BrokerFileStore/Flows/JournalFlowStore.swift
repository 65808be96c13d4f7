import BrokerCore
import Foundation
import Glibc
import Synchronization

/// A ``FlowStore`` holding pending flows in memory, recorded in an append-only journal `<directory>/flows/journal.jsonl`.
///
/// A put appends the flow's line and a take appends a `take` line, each with
/// one `write`, so no file is created or deleted per flow. Memory and journal
/// change together under one lock, so of any number of concurrent takes of one
/// state exactly one gets the flow; a take whose line cannot be written (disk
/// full, read-only) throws and leaves the flow pending. At start the journal is replayed
/// (``FlowJournalReplay``: a torn last record is ignored) and rewritten with
/// only the pending flows; it is rewritten again whenever it grows past
/// `compactionThreshold` bytes of mostly dead records.
///
/// With `durable: true` a put or take returns only after an fdatasync of the
/// journal that began after its write; concurrent calls share those syncs
/// (``GroupCommit``). With `durable: false` nothing is synced: flows survive a
/// crash or `kill -9` of the process (the page cache outlives it), and a power
/// loss can at worst cancel sign-ins in progress.
///
/// One process owns a data directory, as with ``JSONFileAccountRepository``:
/// single use holds across this process's threads, not across processes.
/// Flow files left by the earlier one-file-per-flow store (`<state>.json`) are imported into
/// the journal at start and removed.
///
/// It is the ``FlowOutcomeStore`` of the same broker too: an outcome is one
/// more line in the journal, kept in memory until its `keepUntil` passes
/// (``purgeExpired(now:)`` forgets it then, a replay skips it, a rewrite leaves it out).
public final class JournalFlowStore: FlowStore, FlowOutcomeStore {
    /// The journal's file name inside the flows directory.
    public static let journalName = "journal.jsonl"

    /// The directory holding the journal.
    public let flowsDirectory: String
    /// The journal's path.
    public let journalPath: String
    /// Whether puts and takes wait for fdatasync (power-loss safe) or only for the write.
    public let durable: Bool
    /// How many flows found at start could not be offered again: cancelled by damage in the journal, or unreadable.
    public let discardedAtOpen: Int
    /// Seals the PKCE verifier and request-token secret at rest when set.
    let sealer: EncryptedAccountCodec?
    /// The most flows kept pending; a put beyond it drops the oldest first (a sixteenth of the cap at a time).
    public let maxPending: Int
    /// The most outcomes kept; beyond it those that would be forgotten first go first (a sixteenth of the cap at a time).
    public let maxOutcomes: Int
    private let journal: Journal<FlowJournal>
    private let evicted = Atomic<Int>(0)

    /// Opens the store under `directory`, creating it and `flows/` with mode 0700; blocks while it replays, so call it before serving.
    ///
    /// The journal is rewritten with the pending flows before this returns
    /// (synced when `durable`); temporary files of interrupted rewrites are removed.
    ///
    /// At most `maxPending` flows are kept: every pending flow lives in memory, so a
    /// client starting sign-ins it never finishes must not grow it without bound.
    /// Past the cap the flows that expire first (the oldest) are dropped, so a flood
    /// of abandoned starts costs a real user a retry at worst, never a refusal.
    /// At most `maxOutcomes` outcomes are kept, for the same reason; outcomes whose
    /// `keepUntil` passed at `now` are not read back.
    public init(
        directory: String, durable: Bool = true, sealer: EncryptedAccountCodec? = nil,
        compactionThreshold: Int = 4 << 20, maxPending: Int = 50_000, maxOutcomes: Int? = nil, now: Date = Date()
    ) throws(StoreError) {
        self.maxPending = max(1, maxPending)
        self.maxOutcomes = max(1, maxOutcomes ?? 2 * maxPending)
        let (path, bytes) = try JournalFile.open(Self.journalName, in: "flows", of: directory)
        flowsDirectory = directory + "/flows"
        journalPath = path
        self.durable = durable
        self.sealer = sealer

        let replay = FlowJournalReplay(bytes)
        var entries: [String: FlowJournal.Entry] = [:]
        var discarded = replay.cancelledFlows
        for (state, pending) in replay.pending {
            guard let flow = try? PendingFlowCodec.flow(from: pending.record, path: journalPath, sealer: sealer) else {
                discarded += 1
                continue
            }
            entries[state] = FlowJournal.Entry(flow: flow, line: pending.line)
        }
        var outcomes: [String: FlowJournal.OutcomeEntry] = [:]
        for (state, found) in replay.outcomes {
            guard let outcome = try? FlowOutcomeCodec.outcome(from: found.record, path: journalPath), !outcome.isStale(at: now) else {
                continue
            }
            outcomes[state] = FlowJournal.OutcomeEntry(outcome: outcome, line: found.line)
        }
        let legacy = try Self.importLegacyFiles(in: flowsDirectory, into: &entries, sealer: sealer)
        discardedAtOpen = discarded + legacy.unreadable
        journal = try Journal(
            path: path, state: FlowJournal(entries: entries, outcomes: outcomes), durable: durable,
            compactionThreshold: compactionThreshold)
        // The journal now holds the imported flows; only then do their old files go.
        for name in legacy.names { unlink(flowsDirectory + "/" + name) }
        if durable && !legacy.names.isEmpty { try DurableFile.syncDirectory(flowsDirectory) }
    }

    /// Opens the store under the file URL `directory`; see ``init(directory:durable:sealer:compactionThreshold:)``.
    public convenience init(directory: URL, durable: Bool = true, sealer: EncryptedAccountCodec? = nil) throws(StoreError) {
        try self.init(directory: directory.path, durable: durable, sealer: sealer)
    }

    /// How many pending flows were dropped at the cap since the store opened.
    public var droppedAtCap: Int { evicted.load(ordering: .relaxed) }

    /// How many flows are pending (expired ones included until taken or purged).
    public var pendingCount: Int {
        journal.read { $0.entries.count }
    }

    /// How many flow outcomes are kept in memory (those past their `keepUntil` included until purged).
    public var outcomeCount: Int {
        journal.read { $0.outcomes.count }
    }

    /// Records `flow`; a state that is not 16–128 base64url characters is refused.
    public func put(_ flow: PendingFlow) async throws(StoreError) {
        guard StoreFileName.forFlow(state: flow.state) != nil else {
            throw .unavailable("put flow: the state is not 16 to 128 base64url characters")
        }
        let entry = FlowJournal.Entry(flow: flow, line: FlowJournalRecord.encodePut(PendingFlowCodec.record(for: flow, sealer: sealer)))
        try await perform { () throws(StoreError) in
            try self.journal.changeDurably { (log: inout JournalLog<FlowJournal>) throws(StoreError) in
                try self.makeRoom(in: &log, for: entry.flow.state)
                try log.put(entry)
            }
        }
    }

    /// Records `flow` and, when `outcomes` is this store, `outcome` with it: both lines in one `write`, one durable wait.
    ///
    /// The put line comes first, so a torn write (a crash in the middle) can
    /// leave the flow without its outcome, never the outcome without the flow;
    /// a replay reads the lines as it reads those of a put and a record made apart.
    /// With another outcome store this is ``put(_:)`` then `outcomes.record(outcome)`.
    public func put(_ flow: PendingFlow, recording outcome: FlowOutcome, in outcomes: any FlowOutcomeStore) async throws(StoreError) {
        guard (outcomes as? JournalFlowStore) === self else { return try await putThenRecord(flow, outcome, in: outcomes) }
        guard StoreFileName.forFlow(state: flow.state) != nil, StoreFileName.forFlow(state: outcome.state) != nil else {
            throw .unavailable("put flow: the state is not 16 to 128 base64url characters")
        }
        let entry = FlowJournal.Entry(flow: flow, line: FlowJournalRecord.encodePut(PendingFlowCodec.record(for: flow, sealer: sealer)))
        let outcomeEntry = FlowJournal.OutcomeEntry(
            outcome: outcome, line: FlowJournalRecord.encodeOutcome(FlowOutcomeCodec.record(for: outcome)))
        try await perform { () throws(StoreError) in
            try self.journal.changeDurably { (log: inout JournalLog<FlowJournal>) throws(StoreError) in
                try self.makeRoom(in: &log, for: entry.flow.state)
                self.makeRoomForOutcome(in: &log, of: outcome.state)
                try log.put(entry, recording: outcomeEntry)
            }
        }
    }

    /// Removes and returns the flow for `state`; nil when absent, expired at `now` (removed too), or `state` is malformed.
    public func take(state: String, now: Date) async throws(StoreError) -> PendingFlow? {
        guard StoreFileName.forFlow(state: state) != nil else { return nil }
        // RFC 6749 §10.12: a state is good for one callback; the journal's lock picks the one taker.
        let flow = try await perform { () throws(StoreError) -> PendingFlow? in
            try self.journal.changeDurably { (log: inout JournalLog<FlowJournal>) throws(StoreError) in try log.take([state]).first }
        }
        guard let flow, !flow.isExpired(at: now) else { return nil }
        return flow
    }

    /// Removes every flow expired at `now` and returns how many; forgets the outcomes whose `keepUntil` passed too.
    public func purgeExpired(now: Date) async throws(StoreError) -> Int {
        try await perform { () throws(StoreError) -> Int in
            try self.journal.changeDurably { (log: inout JournalLog<FlowJournal>) throws(StoreError) -> Int in
                log.state.forgetOutcomes(log.state.outcomes.filter { $0.value.outcome.isStale(at: now) }.map(\.key))
                return try log.take(log.state.entries.filter { $0.value.flow.isExpired(at: now) }.map(\.key)).count
            }
        }
    }

    /// The pending flow for `state`, read from memory without taking it.
    public func pending(state: String, now: Date) async throws(StoreError) -> PendingFlow? {
        guard let flow = journal.read({ $0.entries[state]?.flow }), !flow.isExpired(at: now) else { return nil }
        return flow
    }

    /// Appends a put of `flow` when its state is still pending: a replay keeps the last put of a state.
    public func replace(_ flow: PendingFlow) async throws(StoreError) -> Bool {
        let entry = FlowJournal.Entry(flow: flow, line: FlowJournalRecord.encodePut(PendingFlowCodec.record(for: flow, sealer: sealer)))
        return try await perform { () throws(StoreError) -> Bool in
            try self.journal.changeDurably { (log: inout JournalLog<FlowJournal>) throws(StoreError) -> Bool in
                guard log.state.entries[flow.state] != nil else { return false }
                try log.put(entry)
                return true
            }
        }
    }

    /// The pending device sign-ins, read from memory.
    public func deviceFlows(now: Date) async throws(StoreError) -> [PendingFlow] {
        journal.read { $0.entries.values.map(\.flow).filter { $0.device != nil && !$0.isExpired(at: now) } }
    }

    /// Records `outcome` in the journal, replacing its state's earlier one; a state that is not 16–128 base64url
    /// characters is refused.
    public func record(_ outcome: FlowOutcome) async throws(StoreError) {
        guard StoreFileName.forFlow(state: outcome.state) != nil else {
            throw .unavailable("record flow outcome: the state is not 16 to 128 base64url characters")
        }
        let entry = FlowJournal.OutcomeEntry(
            outcome: outcome, line: FlowJournalRecord.encodeOutcome(FlowOutcomeCodec.record(for: outcome)))
        try await perform { () throws(StoreError) in
            try self.journal.changeDurably { (log: inout JournalLog<FlowJournal>) throws(StoreError) in
                self.makeRoomForOutcome(in: &log, of: outcome.state)
                try log.record(entry)
            }
        }
    }

    /// The outcome recorded for `state`; nil when none, its `keepUntil` passed at `now`, or `state` is malformed.
    public func outcome(state: String, now: Date) async throws(StoreError) -> FlowOutcome? {
        guard StoreFileName.forFlow(state: state) != nil else { return nil }
        guard let outcome = journal.read({ $0.outcomes[state]?.outcome }), !outcome.isStale(at: now) else { return nil }
        return outcome
    }

    /// At the cap, drops the flows that expire first, a sixteenth of the cap at once so the sort is paid rarely; call with the journal locked.
    private func makeRoom(in log: inout JournalLog<FlowJournal>, for state: String) throws(StoreError) {
        guard log.state.entries.count >= maxPending, log.state.entries[state] == nil else { return }
        let count = log.state.entries.count - maxPending + max(1, maxPending / 16)
        let oldest = log.state.entries.values.map { ($0.flow.expiresAt, $0.flow.state) }.sorted { $0.0 < $1.0 }.prefix(count).map(\.1)
        let flows = try log.take(oldest)
        evicted.wrappingAdd(flows.count, ordering: .relaxed)
    }

    /// At the outcome cap, forgets those kept the shortest, a sixteenth of the cap at once; call with the journal locked.
    private func makeRoomForOutcome(in log: inout JournalLog<FlowJournal>, of state: String) {
        guard log.state.outcomes.count >= maxOutcomes, log.state.outcomes[state] == nil else { return }
        let count = log.state.outcomes.count - maxOutcomes + max(1, maxOutcomes / 16)
        let first = log.state.outcomes.values.map { ($0.outcome.keepUntil, $0.outcome.state) }.sorted { $0.0 < $1.0 }
        log.state.forgetOutcomes(first.prefix(count).map(\.1))
    }

    /// Runs `body` inline when nothing is synced, else on a ``BlockingIO`` lane.
    ///
    /// Without fsync a call is a lock and one small `write` into the page
    /// cache, cheaper than the two thread hops a lane costs.
    private func perform<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) async throws(StoreError) -> T {
        durable ? try await BlockingIO.run(body) : try body()
    }
}
