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
        index.withLock { table in Self.replace(sealed, by: account, id: id, in: &table) }
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

    /// Decrypts every account still sealed, in batches, so later reads find them open; returns the errors of those that do not open.
    ///
    /// The initializer runs this on a background queue right after loading. A
    /// record that fails stays sealed, and its reads keep throwing the error
    /// returned here; a write that replaced an entry meanwhile wins over its
    /// opening.
    @discardableResult
    public func openSealedAccounts() -> [StoreError] {
        let ids = index.withLock { table in table.compactMap { $0.value.sealed == nil ? nil : $0.key } }
        var errors: [StoreError] = []
        var start = 0
        while start < ids.count {
            let batch = ids[start..<min(start + Self.openingBatch, ids.count)]
            start = batch.endIndex
            let entries = index.withLock { table in batch.compactMap { id in table[id].map { (id, $0) } } }
            var opened: [(id: String, sealed: SealedSecrets, account: Account)] = []
            opened.reserveCapacity(entries.count)
            for (id, stored) in entries {
                guard let sealed = stored.sealed else { continue }
                do throws(StoreError) {
                    opened.append((id, sealed, try sealed.open(into: stored.account, path: recordPath(id))))
                } catch {
                    errors.append(error)
                }
            }
            cache(opened)
        }
        return errors.sorted { $0.description < $1.description }
    }

    /// Keeps each opened account in place of its sealed entry.
    private func cache(_ opened: [(id: String, sealed: SealedSecrets, account: Account)]) {
        guard !opened.isEmpty else { return }
        index.withLock { table in
            for entry in opened { Self.replace(entry.sealed, by: entry.account, id: entry.id, in: &table) }
        }
    }

    /// Puts `account` in place of the entry of `id`, unless a write has replaced that entry since `sealed` was read from it.
    private static func replace(_ sealed: SealedSecrets, by account: Account, id: String, in table: inout [String: StoredAccount]) {
        guard let current = table[id]?.sealed, current === sealed else { return }
        table[id] = StoredAccount(account)
    }

    /// The path of the record of `id`, for error messages.
    private func recordPath(_ id: String) -> String {
        path(for: id) ?? accountsDirectory + "/" + id
    }
}
