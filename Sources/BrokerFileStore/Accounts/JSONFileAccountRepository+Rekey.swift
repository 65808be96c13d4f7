import BrokerCore
import Glibc

extension JSONFileAccountRepository {
    /// Re-encrypts with `codec`'s current key every record that is plaintext or sealed with an older key.
    ///
    /// `codec` must be the ``EncryptedAccountCodec`` this repository was opened
    /// with. Each stale file (``EncryptedAccountCodec/needsRekey(_:path:)``) is
    /// rewritten through ``put(_:)``, so the per-id lock, the durable write and
    /// the memory update are those of any write; files already sealed with the
    /// current key are left alone. Returns how many records were rewritten and
    /// how many exist. Throws if a rewritten file is still not sealed with the
    /// current key (the repository was opened with another codec).
    ///
    /// Like ``AccountRekey/run(repository:concurrency:)`` it reads each account
    /// just before writing it, so run it before serving, as `token-broker rekey` does.
    public func rekey(
        codec: EncryptedAccountCodec,
        concurrency: Int = AccountRekey.defaultConcurrency
    ) async throws(StoreError) -> (rewritten: Int, total: Int) {
        let accounts = try await list(provider: nil)
        let rewritten = try await AccountRekey.count(accounts, concurrency: concurrency) { (account) async throws(StoreError) in
            let path = self.path(for: account.id)
            guard try await Self.isStale(path, codec: codec), let current = try await self.get(id: account.id) else { return false }
            try await self.put(current)
            guard try await !Self.isStale(path, codec: codec) else {
                throw .unavailable(
                    "rekey \(path): the record was not sealed with key \"\(codec.keyring.current.id)\"; "
                        + "open the repository with the same EncryptedAccountCodec")
            }
            return true
        }
        return (rewritten, accounts.count)
    }

    /// Whether the file at `path` exists and is not sealed with the current key, read off the cooperative pool.
    private static func isStale(_ path: String, codec: EncryptedAccountCodec) async throws(StoreError) -> Bool {
        try await BlockingIO.run { () throws(StoreError) -> Bool in
            guard let bytes = try DurableFile.read(path) else { return false }
            return try codec.needsRekey(bytes, path: path)
        }
    }
}

/// A record ``JSONFileAccountRepository/rekey(codec:concurrency:)`` would rewrite, as a dry run reports it.
public struct RekeyCandidate: Sendable, Equatable {
    /// The account's id.
    public var accountID: String
    /// The record's file name under `accounts/`.
    public var fileName: String
    /// The ids of the keys its secrets are sealed with now, other than the current one, sorted; empty for a plaintext record.
    public var sealedWith: [String]
}

extension JSONFileAccountRepository {
    /// What ``rekey(codec:concurrency:)`` would rewrite under the data directory `directory`, found without writing
    /// anything: no directory is created, no temporary file removed, no mode changed, no lock taken.
    ///
    /// Every record is read and opened with `codec`, so a record the rekey would fail on
    /// (a key missing from the keyring, a tampered file, a name that does not match its id)
    /// throws here as it would there, naming the file. A missing `accounts/` directory holds
    /// no records. Returns the candidates sorted by file name and how many records exist.
    public static func rekeyPlan(directory: String, codec: EncryptedAccountCodec) throws(StoreError) -> (
        candidates: [RekeyCandidate], total: Int
    ) {
        let accounts = directory + "/accounts"
        var status = stat()
        if stat(accounts, &status) != 0 && errno == ENOENT { return ([], 0) }
        let names = try DirectoryListing.names(in: accounts).filter(StoreFileName.isRecordName).sorted()
        var candidates: [RekeyCandidate] = []
        var total = 0
        for name in names {
            let path = accounts + "/" + name
            // Gone since the listing: a broker running on the directory deleted it.
            guard let bytes = try DurableFile.read(path) else { continue }
            total += 1
            let stored = try codec.storedAccount(bytes, path: path)
            let id = stored.account.id
            guard StoreFileName.isName(name, forAccount: id) else {
                throw .corrupt(path: path, reason: "the file name does not match the account id \"\(id)\"")
            }
            _ = try stored.opened(path: path)
            guard try codec.needsRekey(bytes, path: path) else { continue }
            let keys = (stored.sealed?.all ?? []).map(\.key.id).filter { $0 != codec.keyring.current.id }
            candidates.append(RekeyCandidate(accountID: id, fileName: name, sealedWith: Array(Set(keys)).sorted()))
        }
        return (candidates, total)
    }
}
