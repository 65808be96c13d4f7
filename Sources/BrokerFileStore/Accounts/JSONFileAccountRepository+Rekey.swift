import BrokerCore

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
    public func rekey(codec: EncryptedAccountCodec,
                      concurrency: Int = AccountRekey.defaultConcurrency) async throws(StoreError) -> (rewritten: Int, total: Int) {
        let accounts = try await list(provider: nil)
        let rewritten = try await AccountRekey.count(accounts, concurrency: concurrency) { (account) async throws(StoreError) in
            let path = self.path(for: account.id)
            guard try await Self.isStale(path, codec: codec), let current = try await self.get(id: account.id) else { return false }
            try await self.put(current)
            guard try await !Self.isStale(path, codec: codec) else {
                throw .unavailable("rekey \(path): the record was not sealed with key \"\(codec.keyring.current.id)\"; "
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
