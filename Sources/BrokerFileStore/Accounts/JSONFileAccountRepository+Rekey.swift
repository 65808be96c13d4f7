import BrokerCore
import Glibc

extension JSONFileAccountRepository {
    /// Re-encrypts with `codec`'s current key every record that is plaintext or sealed with an older key.
    ///
    /// `codec` must be the ``EncryptedAccountCodec`` this repository was opened
    /// with. Each stale record (``EncryptedAccountCodec/needsRekey(_:path:)``) is
    /// rewritten through ``put(_:)``, so the per-id lock, the durable write and
    /// the memory update are those of any write; records already sealed with the
    /// current key are left alone. Returns how many records were rewritten and
    /// how many exist. Throws if a rewritten record is still not sealed with the
    /// current key (the repository was opened with another codec).
    ///
    /// Then the journal is compacted, so no file of the store keeps the records as they were
    /// (the former layout's `accounts.migrated/`, if any, still does: the command says so).
    ///
    /// Like ``AccountRekey/run(repository:concurrency:)`` it reads each account
    /// just before writing it, so run it before serving, as `token-broker rekey` does.
    public func rekey(
        codec: EncryptedAccountCodec,
        concurrency: Int = AccountRekey.defaultConcurrency
    ) async throws(StoreError) -> (rewritten: Int, total: Int) {
        let accounts = try await list(provider: nil)
        let rewritten = try await AccountRekey.count(accounts, concurrency: concurrency) { (account) async throws(StoreError) in
            let id = account.id
            guard try await self.isStale(id, codec: codec), let current = try await self.get(id: account.accountID) else { return false }
            try await self.put(current)
            guard try await !self.isStale(id, codec: codec) else {
                throw .unavailable(
                    "rekey \(self.recordName(id)): the record was not sealed with key \"\(codec.keyring.current.id)\"; "
                        + "open the repository with the same EncryptedAccountCodec")
            }
            return true
        }
        // The journal still holds the records as they were; a compaction leaves only the re-sealed ones on disk.
        if rewritten > 0 { try await compact() }
        return (rewritten, accounts.count)
    }

    /// Whether the record of `id` exists and is not sealed with the current key, read off the cooperative pool.
    private func isStale(_ id: String, codec: EncryptedAccountCodec) async throws(StoreError) -> Bool {
        try await BlockingIO.run { () throws(StoreError) -> Bool in
            guard let bytes = try self.journal.record(id: id) else { return false }
            return try codec.needsRekey(bytes, path: self.recordName(id))
        }
    }
}

/// A record ``JSONFileAccountRepository/rekey(codec:concurrency:)`` would rewrite, as a dry run reports it.
public struct RekeyCandidate: Sendable, Equatable {
    /// The account's id.
    public var accountID: String
    /// Where its record lies: the snapshot or journal file and line (the file under `accounts/` in the former layout).
    public var fileName: String
    /// The ids of the keys its secrets are sealed with now, other than the current one, sorted; empty for a plaintext record.
    public var sealedWith: [String]

    /// A candidate for `accountID`, stored at `fileName` (for PostgreSQL, the table's row), sealed with `sealedWith`.
    public init(accountID: String, fileName: String, sealedWith: [String]) {
        self.accountID = accountID
        self.fileName = fileName
        self.sealedWith = sealedWith
    }
}

extension JSONFileAccountRepository {
    /// What ``rekey(codec:concurrency:)`` would rewrite under the data directory `directory`, found without writing
    /// anything: no directory is created, no temporary file removed, no mode changed, no lock taken.
    ///
    /// Every record is read and opened with `codec`, so a record the rekey would fail on
    /// (a key missing from the keyring, a tampered record, a name that does not match its id)
    /// throws here as it would there, naming its file. A directory in the former layout is read
    /// as it is (the rekey would migrate it first). Returns the candidates sorted by id and how many records exist.
    public static func rekeyPlan(directory: String, codec: EncryptedAccountCodec) throws(StoreError) -> (
        candidates: [RekeyCandidate], total: Int
    ) {
        let records = try AccountStoreReader.records(in: directory) { bytes, path throws(StoreError) in
            try codec.storedAccount(bytes, path: path).account.id
        }
        var candidates: [RekeyCandidate] = []
        for record in records {
            let stored = try codec.storedAccount(record.bytes, path: record.origin)
            _ = try stored.opened(path: record.origin)
            guard try codec.needsRekey(record.bytes, path: record.origin) else { continue }
            let keys = (stored.sealed?.all ?? []).map(\.key.id).filter { $0 != codec.keyring.current.id }
            let name = record.origin.hasPrefix(directory + "/") ? String(record.origin.dropFirst(directory.count + 1)) : record.origin
            candidates.append(RekeyCandidate(accountID: record.id, fileName: name, sealedWith: Array(Set(keys)).sorted()))
        }
        let total = records.count
        return (candidates, total)
    }
}
