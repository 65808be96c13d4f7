import BrokerCore
import Dispatch
import Glibc
import Synchronization

/// Moves a data directory of the former layout, one JSON file per account under `accounts/`, to the snapshot and journal.
///
/// Every record file is read and checked as the former loader did (it
/// decodes, and its name matches its id), then all are written into the
/// first snapshot, which is renamed into place only once complete and
/// synced. Until that rename the old directory is untouched and a start of
/// either version still reads it; after it, `accounts/` is renamed to
/// `accounts.migrated/` (kept for a rollback, never read again), and a start
/// that finds both the snapshot and `accounts/` (killed in between) finishes that rename.
enum AccountStoreMigration {
    /// Migrates `directory` when it still has the former layout; returns how many accounts were migrated (nil: nothing to do).
    @discardableResult
    static func runIfNeeded(_ directory: String, codec: some AccountRecordCodec) throws(StoreError) -> Int? {
        let legacy = directory + "/" + AccountStoreFormat.legacyDirectoryName
        var status = stat()
        guard stat(legacy, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return nil }
        let names = try DirectoryListing.names(in: directory)
        let migrated = names.contains(AccountStoreFormat.snapshotName) || names.contains { AccountStoreFormat.journalGeneration($0) != nil }
        var count: Int?
        if !migrated {
            let records = try readLegacy(legacy, codec: codec)
            _ = try AccountSnapshotWriter.write(
                records: records, to: directory + "/" + AccountStoreFormat.snapshotName, journal: 1, number: 0, keepOpen: false)
            count = records.count
        }
        try moveAside(legacy, in: directory, names: names)
        return count
    }

    /// Renames `accounts/` to `accounts.migrated/` (or `accounts.migrated.2/`… when taken) and syncs the directory.
    private static func moveAside(_ legacy: String, in directory: String, names: [String]) throws(StoreError) {
        var target = AccountStoreFormat.migratedDirectoryName
        var suffix = 2
        while names.contains(target) {
            target = AccountStoreFormat.migratedDirectoryName + ".\(suffix)"
            suffix += 1
        }
        guard rename(legacy, directory + "/" + target) == 0 else { throw .posix("rename to", directory + "/" + target) }
        try DurableFile.syncDirectory(directory)
    }

    /// Every record of the former directory, compact and sorted by id; throws naming the first bad file (by name).
    private static func readLegacy(_ legacy: String, codec: some AccountRecordCodec) throws(StoreError) -> [(id: String, bytes: [UInt8])] {
        let names = try DirectoryListing.names(in: legacy).filter(StoreFileName.isRecordName).sorted()
        let deferring = codec.deferredDecoding?.decoder
        let batch = 1024
        let batches = (names.count + batch - 1) / batch
        let results = Mutex<[Int: Result<[(id: String, bytes: [UInt8])], StoreError>]>([:])
        // The reads wait on the disk more than on the CPU: more threads than cores keep it busy.
        let queue = DispatchQueue(label: "token-broker.accounts.migration", attributes: .concurrent)
        let group = DispatchGroup()
        let next = Atomic<Int>(0)
        for _ in 0..<8 {
            queue.async(group: group) {
                while true {
                    let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                    guard index < batches else { return }
                    var records: [(id: String, bytes: [UInt8])] = []
                    do throws(StoreError) {
                        for name in names[(index * batch)..<min((index + 1) * batch, names.count)] {
                            let path = legacy + "/" + name
                            // Gone since the listing: nothing to carry over.
                            guard let bytes = try DurableFile.read(path) else { continue }
                            let id: String
                            if let deferring {
                                id = try deferring.storedAccount(bytes, path: path).account.id
                            } else {
                                id = try codec.decode(bytes, path: path).id
                            }
                            guard StoreFileName.isName(name, forAccount: id) else {
                                throw .corrupt(path: path, reason: "the file name does not match the account id \"\(id)\"")
                            }
                            records.append((id, JSONLine.compact(bytes)))
                        }
                        results.withLock { $0[index] = .success(records) }
                    } catch {
                        results.withLock { $0[index] = .failure(error) }
                    }
                }
            }
        }
        group.wait()
        var all: [(id: String, bytes: [UInt8])] = []
        all.reserveCapacity(names.count)
        let done = results.withLock { $0 }
        for index in 0..<batches { all += try done[index]!.get() }
        all.sort { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
        return all
    }
}
