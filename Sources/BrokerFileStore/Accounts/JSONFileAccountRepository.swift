import BrokerCore
import Foundation
import Synchronization

/// An ``AccountRepository`` keeping one human-readable JSON file per account under `<directory>/accounts`.
///
/// Every record is loaded and validated into memory at start, and reads are
/// served from there. A write goes to disk first (``DurableFile``) and then to
/// memory, so a failed write changes nothing anyone can see. Writes of one id
/// are serialized; writes of different ids run in parallel on ``BlockingIO``
/// lanes, and each costs the same however many accounts exist. Concurrent
/// writes share the final fsync of the directory (``SyncedDirectory``), and
/// none returns before an fsync that began after its own rename.
///
/// With ``EncryptedAccountCodec`` the secrets of sealed records are decrypted
/// on first use, not at start: start-up opens one record per key id (so a
/// wrong key still stops it), and a background pass opens the rest right
/// after. A record that fails to open then (tampered) makes every read of it
/// throw ``StoreError/corrupt(path:reason:)`` naming its file, never return
/// garbage, and an update of it changes nothing.
///
/// One process should own a directory: another process's writes reach this
/// one's memory only at its next start.
public final class JSONFileAccountRepository: AccountRepository {
    /// The directory holding one `<percent-encoded id>.json` file per account.
    public let accountsDirectory: String

    private let codec: any AccountRecordCodec
    /// Shares directory fsyncs among concurrent writes of different accounts (group commit).
    let directorySync: SyncedDirectory
    /// Every account by id: the acknowledged state of the files, some perhaps still sealed.
    let index: Mutex<AccountIndex>
    let locks = KeyedAsyncLock()
    /// Where a write with events stops as a crash would, writing nothing more; for tests.
    let crashPoints = Mutex<Set<EventWriteStep>>([])

    /// Opens the store under `directory`, creating it and `accounts/` with mode 0700.
    ///
    /// Removes temporary files left by interrupted writes and loads every
    /// record. Blocks while loading, so call it before serving. Throws
    /// ``StoreError/corrupt(path:reason:)`` naming the first bad file (which is
    /// left untouched), or ``StoreError/unavailable(_:)`` when I/O fails.
    /// Then, unless `openSealedInBackground` is false, starts decrypting the
    /// records still sealed on a background thread (see ``openSealedAccounts()``).
    public init(
        directory: String, codec: some AccountRecordCodec = PlainJSONAccountCodec(),
        openSealedInBackground: Bool = true
    ) throws(StoreError) {
        try DataDirectory.prepare(directory)
        let accountsDirectory = directory + "/accounts"
        try DataDirectory.prepare(accountsDirectory)
        self.accountsDirectory = accountsDirectory
        directorySync = SyncedDirectory(accountsDirectory)
        self.codec = codec
        // The loader also removes the temporary files of interrupted writes, from the same listing.
        self.index = Mutex(try AccountDirectoryLoader.load(accountsDirectory, codec: codec))
        if openSealedInBackground { openSealedAccountsInBackground() }
    }

    /// Opens the store under the file URL `directory`; see ``init(directory:codec:openSealedInBackground:)-(String,_,_)``.
    public convenience init(
        directory: URL, codec: some AccountRecordCodec = PlainJSONAccountCodec(),
        openSealedInBackground: Bool = true
    ) throws(StoreError) {
        try self.init(directory: directory.path, codec: codec, openSealedInBackground: openSealedInBackground)
    }

    /// The account with `id`, from memory; throws ``StoreError/corrupt(path:reason:)`` when its sealed secrets do not open.
    public func get(id: String) async throws(StoreError) -> Account? {
        try current(id)
    }

    /// Durably writes `account` to its file, then makes it visible.
    public func put(_ account: Account) async throws(StoreError) {
        let id = account.id
        let record = try record(for: account)
        try await locks.withLock(id) { () async throws(StoreError) in
            try await BlockingIO.run { () throws(StoreError) in try DurableFile.write(record.bytes, to: record.path, in: self.directorySync)
            }
            index.withLock { $0.set(StoredAccount(record.stored), for: id) }
        }
    }

    /// Durably removes the account's file, then forgets the account.
    public func delete(id: String) async throws(StoreError) -> Account? {
        let path = path(for: id)
        return try await locks.withLock(id) { () async throws(StoreError) -> Account? in
            guard let current = try current(id) else { return nil }
            try await BlockingIO.run { () throws(StoreError) in _ = try DurableFile.remove(path, in: self.directorySync) }
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
    public func update(id: String, _ transform: @Sendable (Account?) throws(StoreError) -> Account?) async throws(StoreError) -> Account? {
        try await locks.withLock(id) { () async throws(StoreError) -> Account? in
            let current = try current(id)
            guard let next = try transform(current) else {
                if current != nil {
                    let path = path(for: id)
                    try await BlockingIO.run { () throws(StoreError) in _ = try DurableFile.remove(path, in: self.directorySync) }
                    index.withLock { $0.remove(id) }
                }
                return nil
            }
            guard ExactKey.same(next.id, id) else {
                throw .unavailable("update of account \(id): the transform returned account \(next.id)")
            }
            if next == current { return current }
            let record = try record(for: next)
            try await BlockingIO.run { () throws(StoreError) in try DurableFile.write(record.bytes, to: record.path, in: self.directorySync)
            }
            index.withLock { $0.set(StoredAccount(record.stored), for: id) }
            return record.stored
        }
    }

    /// The file path of account `id`.
    func path(for id: String) -> String {
        accountsDirectory + "/" + StoreFileName.forAccount(id: id)
    }

    /// The file content for `account` and the account as it will read back after a restart.
    ///
    /// Memory holds what the bytes decode to (``AccountRecordCodec/stored(_:path:)``), not the argument,
    /// so reads before and after a restart agree (dates, for example, are kept to the millisecond).
    func record(for account: Account) throws(StoreError) -> (path: String, bytes: [UInt8], stored: Account) {
        let path = path(for: account.id)
        return (path, try codec.encode(account), try codec.stored(account, path: path))
    }
}

extension JSONFileAccountRepository: AccountStatusCounting {
    /// Counted from the tally the in-memory index keeps with every write (``AccountStatusTally``); nothing is decrypted, read from disk or visited one by one.
    public func statusCounts(at now: Date) async throws(StoreError) -> AccountStatusCounts {
        index.withLock { $0.statusCounts(at: now) }
    }
}

extension JSONFileAccountRepository: ImmediateAccountReading {
    public func getNow(id: String) -> Account? {
        // A record whose secrets do not open answers nil here; get(id:) then throws the error naming its file.
        (try? current(id)) ?? nil
    }
}
