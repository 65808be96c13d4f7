import Dispatch
import Synchronization

extension JSONFileAccountRepository {
    /// How many accounts the background pass opens per turn of the index lock.
    static let openingBatch = 512

    /// The account with `id` from memory, its secrets decrypted (and kept so) when they were still sealed.
    ///
    /// Throws ``StoreError/corrupt(path:reason:)`` naming the file when they do
    /// not open; the entry then stays sealed and its file untouched.
    func current(_ id: String) throws(StoreError) -> Account? {
        guard let stored = index.withLock({ $0[id] }) else { return nil }
        guard let sealed = stored.sealed else { return stored.account }
        let account = try sealed.open(into: stored.account, path: recordPath(id))
        index.withLock { $0.replace(sealed, by: account, id: id) }
        return account
    }

    /// The accounts of `selected` in order, sealed ones decrypted and kept so; throws for the first that does not open.
    func open(_ selected: [(id: String, stored: StoredAccount)]) throws(StoreError) -> [Account] {
        var accounts: [Account] = []
        accounts.reserveCapacity(selected.count)
        var opened: [(id: String, sealed: SealedSecrets, account: Account)] = []
        defer { cache(opened) }
        for (id, stored) in selected {
            guard let sealed = stored.sealed else {
                accounts.append(stored.account)
                continue
            }
            let account = try sealed.open(into: stored.account, path: recordPath(id))
            opened.append((id, sealed, account))
            accounts.append(account)
        }
        return accounts
    }

    /// Decrypts every account still sealed, in parallel batches, so later reads find them open; returns the errors of those that do not open.
    ///
    /// The initializer runs this on a background queue right after loading
    /// (100,000 accounts take a few hundred milliseconds of CPU). A record that
    /// fails stays sealed, and its reads keep throwing the error returned here;
    /// a write that replaced an entry meanwhile wins over its opening.
    @discardableResult
    public func openSealedAccounts() -> [StoreError] {
        let ids = index.withLock { $0.sealedIDs }
        let errors = Mutex<[StoreError]>([])
        let batchCount = (ids.count + Self.openingBatch - 1) / Self.openingBatch
        DispatchQueue.concurrentPerform(iterations: batchCount) { batch in
            let slice = ids[(batch * Self.openingBatch)..<min((batch + 1) * Self.openingBatch, ids.count)]
            let entries = index.withLock { index in slice.compactMap { id in index[id].map { (id, $0) } } }
            var opened: [(id: String, sealed: SealedSecrets, account: Account)] = []
            opened.reserveCapacity(entries.count)
            var failed: [StoreError] = []
            for (id, stored) in entries {
                guard let secrets = stored.sealed else { continue }
                do throws(StoreError) {
                    opened.append((id, secrets, try secrets.open(into: stored.account, path: recordPath(id))))
                } catch {
                    failed.append(error)
                }
            }
            cache(opened)
            if !failed.isEmpty { errors.withLock { $0 += failed } }
        }
        return errors.withLock { $0 }.sorted { $0.description < $1.description }
    }

    /// Keeps each opened account in place of its sealed entry.
    private func cache(_ opened: [(id: String, sealed: SealedSecrets, account: Account)]) {
        guard !opened.isEmpty else { return }
        index.withLock { index in
            for entry in opened { index.replace(entry.sealed, by: entry.account, id: entry.id) }
        }
    }

    /// The path of the record of `id`, for error messages.
    private func recordPath(_ id: String) -> String {
        path(for: id) ?? accountsDirectory + "/" + id
    }
}
