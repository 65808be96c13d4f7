import BrokerCore
import Dispatch
import Glibc
import Synchronization

/// Reads and validates every account file of a directory, in parallel, for start-up.
///
/// The directory is listed in batches, and each batch is loaded on
/// ``LoadLanes`` (one thread per core, more when the reads wait on the disk)
/// while the listing goes on. With a codec that can defer
/// decryption (``StoredAccountDecoding``), sealed records are parsed and
/// checked but their secrets stay sealed until first use, and one record per
/// key id is opened here, so a wrong key still stops start-up. Start-up with
/// 100,000 records is then bound by the `openat`/`read` system calls (see
/// docs/performance.md).
enum AccountDirectoryLoader {
    /// How many names are listed before they are handed to a lane.
    static let batchSize = 1024

    /// Every account in `directory` by id, after removing the temporary files of interrupted writes.
    ///
    /// Only `*.json` files are records; other names are ignored. A record that
    /// does not decode, or whose id does not match its file name, is reported
    /// as ``StoreError/corrupt(path:reason:)``; with several bad files the one
    /// with the smallest path is reported, so the message is stable. Then the
    /// record with the smallest name among those sealed with each key id is
    /// opened, and one that does not open (wrong key, tampered) is reported.
    static func load(_ directory: String, codec: some AccountRecordCodec) throws(StoreError) -> AccountIndex {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .posix("open directory", directory) }
        defer { close(descriptor) }
        let deferring = codec as? any StoredAccountDecoding
        let state = LoadState(capacity: estimatedCount(descriptor))
        let lanes = LoadLanes { records in
            var reader = RecordFileReader(directory: directory, descriptor: descriptor)
            var loaded: [(id: String, name: String, stored: StoredAccount)] = []
            loaded.reserveCapacity(records.count)
            var errors: [StoreError] = []
            for name in records {
                do throws(StoreError) {
                    let (id, stored) = try loadOne(name, reader: &reader, codec: codec, deferring: deferring)
                    loaded.append((id, name, stored))
                } catch {
                    errors.append(error)
                }
            }
            state.merged.withLock { $0.add(loaded, errors: errors) }
        }
        do {
            // Every batch handed out is waited for, even when listing fails, before the descriptor closes.
            defer { lanes.finish() }
            try DirectoryListing.forEachBatch(in: directory, size: batchSize) { names in
                DurableFile.removeStaleTemporaries(in: directory, names: names)
                lanes.add(names.filter(StoreFileName.isRecordName))
            }
        }
        var result = state.merged.withLock { state in
            var taken = Merged()
            swap(&taken, &state)
            return taken
        }
        if let first = result.errors.min(by: { sortKey($0) < sortKey($1) }) { throw first }
        try openOnePerKey(result.probes, into: &result.accounts, directory: directory)
        return result.accounts
    }

    /// Opens the first record (by name) sealed with each key id, so a wrong key stops start-up; the opened ones stay open.
    private static func openOnePerKey(
        _ probes: [String: Probe], into accounts: inout AccountIndex,
        directory: String
    ) throws(StoreError) {
        for probe in probes.values.sorted(by: { $0.name < $1.name }) {
            guard let stored = accounts[probe.id] else { continue }
            accounts.set(StoredAccount(try stored.opened(path: directory + "/" + probe.name)), for: probe.id)
        }
    }

    /// About how many entries the open directory has, from its size, to size the index once instead of growing it.
    ///
    /// An ext4 entry of a record name takes about 28 bytes and directory
    /// blocks are not full, so this errs high by a little; it is only a hint.
    private static func estimatedCount(_ descriptor: Int32) -> Int {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return 0 }
        return min(Int(status.st_size) / 32, 4_000_000)
    }

    /// One record: read, decoded (secrets left sealed when the codec can), and checked against its file name.
    private static func loadOne(
        _ name: String, reader: inout RecordFileReader, codec: some AccountRecordCodec,
        deferring: (any StoredAccountDecoding)?
    ) throws(StoreError) -> (String, StoredAccount) {
        let directory = reader.directory
        guard let bytes = try reader.read(name) else {
            throw .unavailable("load \(directory)/\(name): the file vanished while loading; is another process using this directory?")
        }
        let stored: StoredAccount
        if let deferring {
            stored = try deferring.storedAccount(bytes, path: directory + "/" + name)
        } else {
            stored = StoredAccount(try codec.decode(bytes, path: directory + "/" + name))
        }
        let id = stored.account.id
        guard StoreFileName.isName(name, forAccount: id) else {
            throw .corrupt(path: directory + "/" + name, reason: "the file name does not match the account id \"\(id)\"")
        }
        return (id, stored)
    }

    private static func sortKey(_ error: StoreError) -> String {
        switch error {
        case .corrupt(let path, _): return "0" + path
        case .unavailable(let message): return "1" + message
        }
    }
}

extension AccountDirectoryLoader {
    /// The sealed record chosen to prove a key: the one with the smallest file name.
    private struct Probe {
        var id: String
        var name: String
    }

    /// What the workers share: everything loaded so far.
    private final class LoadState: Sendable {
        let merged: Mutex<Merged>

        init(capacity: Int) {
            merged = Mutex(Merged(accounts: AccountIndex(capacity: capacity)))
        }
    }

    /// Everything loaded so far: accounts by id, errors, and per key id its probe.
    private struct Merged {
        var accounts = AccountIndex()
        var errors: [StoreError] = []
        var probes: [String: Probe] = [:]

        /// Adds one worker's batch.
        mutating func add(_ loaded: [(id: String, name: String, stored: StoredAccount)], errors: [StoreError]) {
            self.errors += errors
            for (id, name, stored) in loaded {
                accounts.set(stored, for: id)
                guard let sealed = stored.sealed else { continue }
                for secret in sealed.all { propose(secret.key.id, id: id, name: name) }
            }
        }

        /// Makes record `name` the probe of `keyID` when it comes before the current one.
        private mutating func propose(_ keyID: String, id: String, name: String) {
            if let current = probes[keyID], current.name <= name { return }
            probes[keyID] = Probe(id: id, name: name)
        }
    }
}
