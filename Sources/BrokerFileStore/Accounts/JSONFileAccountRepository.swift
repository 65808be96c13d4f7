import BrokerCore
import Foundation
import Synchronization

/// An ``AccountRepository`` keeping every account in a JSON-lines snapshot and journal under the data directory.
///
/// Every record is loaded and validated into memory at start, and reads are
/// served from there. A write appends one line to the journal and is
/// acknowledged once an `fdatasync` that began after it has ended (writers
/// arriving together share one, ``AccountJournal``); only then does memory
/// change, so a failed write changes nothing anyone can see. Writes of one
/// id are serialized; writes of different ids run in parallel. The journal
/// is compacted into the snapshot in the background once it has grown
/// (``AccountStoreFormat`` describes the files). A data directory of the
/// former layout, one file per account, is migrated at the first start
/// (``AccountStoreMigration``).
///
/// With ``EncryptedAccountCodec`` the secrets of sealed records are decrypted
/// on first use, not at start: start-up opens one record per key id (so a
/// wrong key still stops it), and a background pass opens the rest right
/// after. A record that fails to open then (tampered) makes every read of it
/// throw ``StoreError/corrupt(path:reason:)``, never return garbage, and an
/// update of it changes nothing.
///
/// One process should own a directory: another process's writes reach this
/// one's memory only at its next start.
public final class JSONFileAccountRepository: AccountRepository {
    /// The data directory holding the snapshot and the journals.
    public let dataDirectory: String
    /// How many accounts the first start migrated from the former layout, or nil when it found none to migrate.
    public let migratedAtOpen: Int?
    /// Whether start-up cut off a torn last journal line (a write a crash interrupted, never acknowledged).
    public let tornLineCutAtOpen: Bool
    /// How many plaintext records of an earlier version start-up sealed before marking the store sealed.
    public let sealedAtOpen: Int

    let codec: any AccountRecordCodec
    let journal: AccountJournal
    /// Every account by id: the acknowledged state of the store, some perhaps still sealed.
    let index: Mutex<AccountIndex>
    let locks = KeyedAsyncLock()
    /// Accounts whose sealed secrets did not open, and who hears of each; see ``onDamagedRecord(_:)``.
    let damaged = Mutex(DamagedRecords())
    /// The data directory's webhook outbox, which events about account changes are staged in; nil until given one.
    let eventOutbox = Mutex<JournalWebhookOutbox?>(nil)
    /// Where a write with events stops as a crash would, writing nothing more; for tests.
    let crashPoints = Mutex<Set<EventWriteStep>>([])

    /// The journal size past which a compaction starts, unless the snapshot is larger (then a quarter of it).
    public static let defaultCompactionThreshold = 8 << 20

    /// Opens the store under `directory`, creating it with mode 0700, migrating a former layout, and loading every record.
    ///
    /// Blocks while loading, so call it before serving. Throws
    /// ``StoreError/corrupt(path:reason:)`` naming the file and line of the
    /// first bad record (nothing is changed), or ``StoreError/unavailable(_:)``
    /// when I/O fails. With a codec that seals, a store marked sealed
    /// (``SealedStoreMarker``) refuses any plaintext record; a store without the
    /// mark (new, or of an earlier version) has its plaintext records sealed
    /// here, one journal line each, and is then marked. Then, unless `openSealedInBackground` is false, starts
    /// decrypting the records still sealed on a background thread (see ``openSealedAccounts()``).
    public init(
        directory: String, codec: some AccountRecordCodec = PlainJSONAccountCodec(),
        openSealedInBackground: Bool = true, compactionThreshold: Int = defaultCompactionThreshold
    ) throws(StoreError) {
        try DataDirectory.prepare(directory)
        dataDirectory = directory
        self.codec = codec
        try AccountStoreLoader.removeTemporaries(in: directory)
        migratedAtOpen = try AccountStoreMigration.runIfNeeded(directory, codec: codec)
        var numbers: UInt32 = 0
        let sealedStore = codec.sealsSecrets ? try SealedStoreMarker.isPresent(in: directory) : false
        var loaded = try AccountStoreLoader.load(directory, codec: codec, refusingPlaintext: sealedStore, numbers: &numbers)
        tornLineCutAtOpen = loaded.tornLineCut
        journal = AccountJournal(
            directory: directory, loaded: loaded, nextNumber: numbers, compactionThreshold: max(1, compactionThreshold))
        sealedAtOpen = try Self.sealPlaintext(loaded.plaintext, in: &loaded.index, journal: journal, codec: codec, directory: directory)
        if codec.sealsSecrets && !sealedStore { try SealedStoreMarker.write(in: directory) }
        index = Mutex(loaded.index)
        // The only other holder of the index's arrays lets go now: the background pass's first change would otherwise
        // copy every account (a few hundred MiB at a million) while this initializer still held the load's copy.
        loaded.index = AccountIndex()
        loaded.locations = RecordLocations()
        // The decoded lines and the parsing's scratch memory are free now; give their pages back.
        HeapTrim.releaseFreeMemory()
        if openSealedInBackground { openSealedAccountsInBackground() }
        buildIDTableInBackground()
    }

    /// Opens the store under the file URL `directory`; see ``init(directory:codec:openSealedInBackground:compactionThreshold:)-(String,_,_,_)``.
    public convenience init(
        directory: URL, codec: some AccountRecordCodec = PlainJSONAccountCodec(),
        openSealedInBackground: Bool = true, compactionThreshold: Int = defaultCompactionThreshold
    ) throws(StoreError) {
        try self.init(
            directory: directory.path, codec: codec, openSealedInBackground: openSealedInBackground,
            compactionThreshold: compactionThreshold)
    }

    /// The account with `id`, from memory; throws ``StoreError/corrupt(path:reason:)`` when its sealed secrets do not open.
    public func get(id typedID: AccountID) async throws(StoreError) -> Account? {
        let id = typedID.string
        return try current(id)
    }

    /// Durably appends `account` to the journal, then makes it visible.
    public func put(_ account: Account) async throws(StoreError) {
        let id = account.id
        let record = try record(for: account)
        try await locks.withLock(id) { () async throws(StoreError) in
            try await BlockingIO.run { () throws(StoreError) in try self.journal.put(record.bytes, id: id) }
            index.withLock { $0.set(StoredAccount(record.stored), for: id) }
            clearDamaged(id)
        }
    }

    /// Durably appends the account's removal, then forgets it.
    public func delete(id typedID: AccountID) async throws(StoreError) -> Account? {
        let id = typedID.string
        return try await locks.withLock(id) { () async throws(StoreError) -> Account? in
            guard let current = try current(id) else { return nil }
            try await BlockingIO.run { () throws(StoreError) in try self.journal.delete(id: id) }
            index.withLock { $0.remove(id) }
            return current
        }
    }

    /// Every account, or those of `provider`, sorted by id in UTF-8 byte order.
    ///
    /// Throws ``StoreError/corrupt(path:reason:)`` for the first selected account whose sealed secrets do not open.
    public func list(provider: String?) async throws(StoreError) -> [Account] {
        let selected = index.withLock { $0.entries(provider: provider) }
        // Sorting on the stored keys avoids rebuilding `id` strings in every comparison.
        return try open(selected.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) })
    }

    /// Applies `transform` to the account with `id` while holding that id's lock, and stores the result.
    ///
    /// An unchanged result writes nothing; a nil result deletes the account.
    /// A result with a different id is refused, since it would bypass the lock.
    public func update(id typedID: AccountID, _ transform: @Sendable (Account?) throws(StoreError) -> Account?) async throws(StoreError)
        -> Account?
    {
        let id = typedID.string
        return try await locks.withLock(id) { () async throws(StoreError) -> Account? in
            let current = try current(id)
            guard let next = try transform(current) else {
                if current != nil {
                    try await BlockingIO.run { () throws(StoreError) in try self.journal.delete(id: id) }
                    index.withLock { $0.remove(id) }
                }
                return nil
            }
            guard ExactKey.same(next.id, id) else {
                throw .unavailable("update of account \(id): the transform returned account \(next.id)")
            }
            if next == current { return current }
            let record = try record(for: next)
            try await BlockingIO.run { () throws(StoreError) in try self.journal.put(record.bytes, id: id) }
            index.withLock { $0.set(StoredAccount(record.stored), for: id) }
            clearDamaged(id)
            return record.stored
        }
    }

    /// Seals the plaintext records of an earlier version (`ids`) with `codec`, one durable journal line each, then
    /// compacts so no file of the store keeps them in plaintext; returns how many.
    ///
    /// Runs before serving, so no lock is needed. Slow for many records (one sync each), but only a store from before
    /// encryption at rest has any, once.
    private static func sealPlaintext(
        _ ids: Set<ExactKey>, in index: inout AccountIndex, journal: AccountJournal, codec: some AccountRecordCodec, directory: String
    ) throws(StoreError) -> Int {
        for key in ids.sorted() {
            guard let account = index[key.string]?.account else { continue }
            let path = directory + "/" + AccountStoreFormat.snapshotName + " (account \(key.string))"
            try journal.put(JSONLine.compact(try codec.encode(account)), id: key.string)
            index.set(StoredAccount(try codec.stored(account, path: path)), for: key.string)
        }
        if !ids.isEmpty { try journal.compact() }
        return ids.count
    }

    /// Compacts the journal into the snapshot now (it also happens by itself as the journal grows).
    public func compact() async throws(StoreError) {
        try await BlockingIO.run { () throws(StoreError) in try self.journal.compact() }
    }

    /// Writes a snapshot of every account as of this call to `path` while reads and writes go on; see ``AccountStoreFormat``.
    ///
    /// The file is complete and synced before it appears under `path`. A data
    /// directory holding it as `accounts.snapshot.jsonl` (and no journal) serves
    /// those accounts; sealed records need the same encryption keys.
    public func backup(to path: String) async throws(StoreError) -> (accounts: Int, bytes: Int) {
        try await BlockingIO.run { () throws(StoreError) in try self.journal.backup(to: path) }
    }

    /// The journal's generation and size and the snapshot's size in bytes, for metrics and benchmarks.
    public var storeSizes: (generation: Int, journalBytes: Int, snapshotBytes: Int) {
        let sizes = journal.sizes
        return (sizes.generation, sizes.journal, sizes.snapshot)
    }

    /// Reports each background compaction that fails (it is tried again as the journal keeps growing).
    public func onCompactionFailure(_ report: @escaping @Sendable (StoreError) -> Void) {
        journal.onCompactionFailure.withLock { $0 = report }
    }

    /// Names account `id`'s record in error messages.
    func recordName(_ id: String) -> String {
        dataDirectory + "/" + AccountStoreFormat.snapshotName + " (account \(id))"
    }

    /// The record for `account` (compact JSON, one line) and the account as it will read back after a restart.
    ///
    /// Memory holds what the bytes decode to (``AccountRecordCodec/stored(_:path:)``), not the argument,
    /// so reads before and after a restart agree (dates, for example, are kept to the millisecond).
    func record(for account: Account) throws(StoreError) -> (bytes: [UInt8], stored: Account) {
        (JSONLine.compact(try codec.encode(account)), try codec.stored(account, path: recordName(account.id)))
    }
}

extension JSONFileAccountRepository: AccountStatusCounting, AccountBackup {
    /// Itself: reads are served from memory.
    public var immediateReading: (any ImmediateAccountReading)? { self }
    /// Itself: counted from memory.
    public var statusCounting: (any AccountStatusCounting)? { self }

    /// Counted from the tally the in-memory index keeps with every write (``AccountStatusTally``); nothing is decrypted, read from disk or visited one by one.
    public func statusCounts(at now: Date) async throws(StoreError) -> AccountStatusCounts {
        index.withLock { $0.statusCounts(at: now) }
    }
}

extension JSONFileAccountRepository: ImmediateAccountReading {
    public func getNow(id typedID: AccountID) -> Account? {
        let id = typedID.string
        // A record whose secrets do not open answers nil here; get(id:) then throws the error naming it.
        do { return try current(id) } catch { return nil }
    }

    public func heldNow(id typedID: AccountID) -> HeldAccount? {
        // The usual case: an open account, its compact form copied once out of the index. A sealed one is opened
        // (and kept open) by getNow(id:); an absent one answers nil there too.
        if let held = index.withLock({ $0.openHeld(typedID.string) }) { return held }
        return getNow(id: typedID).map(HeldAccount.init)
    }

    /// Kept for the latest ``AccountIndex/defaultMemoCapacity`` accounts given one.
    public var keepsMemos: Bool { true }

    public func keepMemo(_ memo: any AnyObject & Sendable, for id: AccountID) {
        index.withLock { $0.keepMemo(memo, for: id.string) }
    }
}

extension JSONFileAccountRepository: AccountMemoReading {
    package func memo(of id: AccountID, where accepts: (borrowing CompactAccount, any AnyObject & Sendable) -> Bool)
        -> (any AnyObject & Sendable)?
    {
        index.withLock { $0.memo(of: id.string, where: accepts) }
    }
}
