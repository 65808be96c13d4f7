import BrokerCore
import Dispatch
import Foundation
import Glibc
import Synchronization

extension JSONFileAccountRepository {
    /// How many accounts the background pass opens per turn of the index lock.
    static let openingBatch = 512
    /// How many batches each thread of the background pass opens between two returns of free heap pages.
    static let trimmingBatches = 64

    /// The account with `id` from memory, its secrets decrypted (and kept so) when they were still sealed.
    ///
    /// Throws ``StoreError/corrupt(path:reason:)`` naming the record when they do
    /// not open; the entry then stays sealed and its record untouched.
    func current(_ id: String) throws(StoreError) -> Account? {
        // The usual case, on every read: an open account, copied once out of the index.
        if let account = index.withLock({ $0.openAccount(id) }) { return account }
        guard let stored = index.withLock({ $0[id] }) else { return nil }
        guard let sealed = stored.sealed else { return stored.account }
        var keys = KeyCopies()
        let account = try open(sealed, into: stored.account, id: id, keys: &keys)
        index.withLock { $0.replace(sealed, by: account, id: id) }
        return account
    }

    /// `account` with `sealed` opened into it; a record that does not open is reported damaged, then thrown.
    ///
    /// Secrets start-up left in the snapshot are read from it now and decoded; the record's envelopes then go
    /// through the same ChaCha20-Poly1305 check as decoded ones, so a record changed on disk since is refused here.
    private func open(_ sealed: IndexedAccount.Sealed, into account: Account, id: String, keys: inout KeyCopies) throws(StoreError)
        -> Account
    {
        do throws(StoreError) {
            let secrets: SealedSecrets
            switch sealed {
            case .secrets(let kept): secrets = kept
            case .snapshot(let records):
                guard let decoder = codec.deferredDecoding?.decoder else {
                    preconditionFailure("secrets left in the snapshot without a deferring codec")
                }
                secrets = try records.sealedSecrets(of: id, decoder: decoder, path: recordPath(id))
            }
            return try secrets.open(into: account, path: recordPath(id), keys: &keys)
        } catch {
            noteDamaged(id, error)
            throw error
        }
    }

    /// The accounts of `selected` in order, sealed ones decrypted and kept so; throws for the first that does not open.
    func open(_ selected: [(id: String, stored: IndexedAccount)]) throws(StoreError) -> [Account] {
        var accounts: [Account] = []
        accounts.reserveCapacity(selected.count)
        var opened: [(id: String, sealed: IndexedAccount.Sealed, account: Account)] = []
        defer { cache(opened) }
        var keys = KeyCopies()
        for (id, stored) in selected {
            guard let sealed = stored.sealed else {
                accounts.append(stored.account)
                continue
            }
            let account = try open(sealed, into: stored.account, id: id, keys: &keys)
            opened.append((id, sealed, account))
            accounts.append(account)
        }
        return accounts
    }

    /// Decrypts every account still sealed, in parallel batches, so later reads find them open; returns the errors of those that do not open.
    ///
    /// A record that fails stays sealed, and its reads keep throwing the error
    /// returned here; a write that replaced an entry meanwhile wins over its
    /// opening. The initializer does the same work in the background with
    /// ``openSealedAccountsInBackground(threadCount:)``.
    @discardableResult
    public func openSealedAccounts() -> [StoreError] {
        let ids = index.withLock { $0.sealedIDs }
        let errors = Mutex<[StoreError]>([])
        let batchCount = (ids.count + Self.openingBatch - 1) / Self.openingBatch
        DispatchQueue.concurrentPerform(iterations: batchCount) { batch in
            var keys = KeyCopies()
            let failed = openBatch(ids[(batch * Self.openingBatch)..<min((batch + 1) * Self.openingBatch, ids.count)], keys: &keys)
            if !failed.isEmpty { errors.withLock { $0 += failed } }
        }
        return errors.withLock { $0 }.sorted { $0.description < $1.description }
    }

    /// Starts decrypting every account still sealed on `threadCount` threads of their own, and returns at once.
    ///
    /// The work is spent at a lower priority while the server starts and serves. Each thread opens with its own copy of the key bytes
    /// (``KeyCopies``), or the threads would queue on one reference count.
    /// Failures are left for reads to report. The last thread out hands the
    /// memory of the sealed copies back to the system.
    func openSealedAccountsInBackground(threadCount: Int = ProcessInfo.processInfo.activeProcessorCount) {
        let work = BatchQueue(ids: index.withLock { $0.sealedIDs }, batchSize: Self.openingBatch)
        guard !work.isEmpty else { return }
        let threads = max(1, threadCount)
        for _ in 0..<threads {
            let thread = Thread { [self] in
                // Below the HTTP workers and the rest of start-up (nice 5). On Linux
                // each thread has its own nice value, so this lowers only this one.
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 5)
                var keys = KeyCopies()
                var batches = 0
                while let batch = work.next() {
                    _ = openBatch(batch, keys: &keys)
                    // The envelopes of the accounts opened so far are free: their pages go back now, so memory does
                    // not hold the sealed and the opened secrets at once (the peak of a large store's start).
                    batches += 1
                    if batches % Self.trimmingBatches == 0 { HeapTrim.releaseFreeMemory() }
                }
                if work.finishOne(of: threads) { HeapTrim.releaseFreeMemory() }
            }
            thread.name = "token-broker.open-sealed"
            thread.start()
        }
    }

    /// Opens the sealed accounts among `ids` and keeps them open; returns the errors of those that do not open, each
    /// also reported as damaged (``onDamagedRecord(_:)``).
    private func openBatch(_ ids: ArraySlice<String>, keys: inout KeyCopies) -> [StoreError] {
        let entries = index.withLock { index in ids.compactMap { id in index[id].map { (id, $0) } } }
        var opened: [(id: String, sealed: IndexedAccount.Sealed, account: Account)] = []
        opened.reserveCapacity(entries.count)
        var failed: [StoreError] = []
        for (id, stored) in entries {
            guard let sealed = stored.sealed else { continue }
            do throws(StoreError) {
                opened.append((id, sealed, try open(sealed, into: stored.account, id: id, keys: &keys)))
            } catch {
                failed.append(error)
            }
        }
        cache(opened)
        return failed
    }

    /// Keeps each opened account in place of its sealed entry.
    private func cache(_ opened: [(id: String, sealed: IndexedAccount.Sealed, account: Account)]) {
        guard !opened.isEmpty else { return }
        index.withLock { index in
            for entry in opened { index.replace(entry.sealed, by: entry.account, id: entry.id) }
        }
    }

    /// Calls `report` with each damaged record found so far, then with each one found later, once per record.
    ///
    /// A damaged record is one whose sealed secrets do not open (tampered bytes, an envelope moved from another
    /// record, a damaged disk): found by the background pass right after start, or by a read. Its reads throw
    /// ``StoreError/corrupt(path:reason:)`` until a write replaces it.
    public func onDamagedRecord(_ report: @escaping @Sendable (_ id: String, _ error: StoreError) -> Void) {
        let known = damaged.withLock { damaged in
            damaged.report = report
            return damaged.errors.map { ($0.key.string, $0.value) }.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        }
        for (id, error) in known { report(id, error) }
    }

    /// How many accounts have a damaged record now.
    public var damagedRecordCount: Int {
        damaged.withLock { $0.errors.count }
    }

    /// Keeps `error` as account `id`'s and reports it, the first time only.
    private func noteDamaged(_ id: String, _ error: StoreError) {
        let report = damaged.withLock { damaged -> (@Sendable (String, StoreError) -> Void)? in
            guard damaged.errors.updateValue(error, forKey: ExactKey(id)) == nil else { return nil }
            return damaged.report
        }
        report?(id, error)
    }

    /// Forgets account `id`'s damaged record: a write replaced or removed it.
    func clearDamaged(_ id: String) {
        damaged.withLock { damaged in
            if !damaged.errors.isEmpty { damaged.errors[ExactKey(id)] = nil }
        }
    }

    /// The record of `id`, for error messages.
    private func recordPath(_ id: String) -> String {
        recordName(id)
    }
}

/// The accounts whose records are damaged, and who hears of a new one.
struct DamagedRecords {
    /// The error of each damaged record, by account id.
    var errors: [ExactKey: StoreError] = [:]
    /// Called once per newly damaged record.
    var report: (@Sendable (String, StoreError) -> Void)?
}

/// Hands out consecutive batches of a list to several threads.
private final class BatchQueue: Sendable {
    private let ids: [String]
    private let batchSize: Int
    private let nextStart = Atomic<Int>(0)
    private let finished = Atomic<Int>(0)

    /// A queue over `ids` in batches of `batchSize`.
    init(ids: [String], batchSize: Int) {
        self.ids = ids
        self.batchSize = batchSize
    }

    /// Whether there is nothing to hand out.
    var isEmpty: Bool { ids.isEmpty }

    /// The next batch, or nil when all have been handed out.
    func next() -> ArraySlice<String>? {
        let start = nextStart.wrappingAdd(batchSize, ordering: .relaxed).oldValue
        guard start < ids.count else { return nil }
        return ids[start..<min(start + batchSize, ids.count)]
    }

    /// Counts one of `count` workers as done; true for the last one.
    func finishOne(of count: Int) -> Bool {
        finished.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue == count
    }
}

extension JSONFileAccountRepository {
    /// How many ids ``buildIDTable()`` hashes per turn of the index lock (about a millisecond's work).
    static let idTableSlice = 16_384

    /// Builds the exact-id table over the index's sorted slots (``SortedIDTable``) on a thread of its own, at the
    /// background pass's lower priority, and returns at once: start-up does not wait for it, and reads use the binary
    /// search until it is installed.
    func buildIDTableInBackground() {
        guard index.withLock({ $0.sortedIDCount }) > 0 else { return }
        let thread = Thread { [self] in
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 5)
            buildIDTable()
        }
        thread.name = "token-broker.id-table"
        thread.start()
    }

    /// Builds and installs the exact-id table: the ids are hashed under the index's lock a slice at a time (the
    /// sorted slots' ids never change, so the slices need not be read at once), the entries filled outside it.
    /// Returns whether the table is in use (none for a store without a snapshot, or a build with too long a probe).
    @discardableResult
    func buildIDTable() -> Bool {
        let count = index.withLock { $0.sortedIDCount }
        guard count > 0 else { return false }
        var builder = SortedIDTable.Builder(count: count)
        var start = 0
        while start < count {
            let length = min(Self.idTableSlice, count - start)
            let seed = builder.seed
            let hashes = index.withLock { $0.idTableHashes(from: start, count: length, seed: seed) }
            guard builder.add(hashes: hashes, firstSlot: start) else { return false }
            start += length
        }
        let table = builder.finish()
        index.withLock { $0.install(table) }
        return true
    }

    /// Whether reads find the snapshot's accounts through the exact-id table.
    var usesIDTable: Bool { index.withLock { $0.hasIDTable } }
}
