/// The file store's memory: every account by id, and the secrets of those not opened yet.
///
/// Accounts sit inline in one dictionary, as before sealed records were opened
/// lazily, so once everything is open a read is one lookup, whatever the
/// number of accounts. The sealed secrets wait in a second dictionary, which
/// the background pass empties (and releases) soon after start-up.
struct AccountIndex: Sendable {
    /// Every account by id; while ``sealed`` holds its id, its secrets are empty placeholders.
    private(set) var accounts: [String: Account] = [:]
    /// The secrets still sealed, by id.
    private(set) var sealed: [String: SealedSecrets] = [:]

    /// An empty index with room for about `capacity` accounts.
    init(capacity: Int = 0) {
        accounts.reserveCapacity(capacity)
        sealed.reserveCapacity(capacity)
    }

    /// The entry of `id`, sealed or not.
    subscript(id: String) -> StoredAccount? {
        guard let account = accounts[id] else { return nil }
        // Once everything is open (the usual state), a read is one lookup.
        guard !sealed.isEmpty, let secrets = sealed[id] else { return StoredAccount(account) }
        return StoredAccount(readable: account, sealed: secrets)
    }

    /// Every entry, or those of `provider`, sealed or not, in no particular order.
    func entries(provider: String?) -> [(id: String, stored: StoredAccount)] {
        var selected: [(id: String, stored: StoredAccount)] = []
        selected.reserveCapacity(provider == nil ? accounts.count : 0)
        for (id, account) in accounts where provider == nil || account.provider == provider {
            let secrets = sealed.isEmpty ? nil : sealed[id]
            selected.append((id, secrets.map { StoredAccount(readable: account, sealed: $0) } ?? StoredAccount(account)))
        }
        return selected
    }

    /// The ids of the accounts still sealed.
    var sealedIDs: [String] { Array(sealed.keys) }

    /// Stores `stored` under `id`, replacing any entry.
    mutating func set(_ stored: StoredAccount, for id: String) {
        accounts[id] = stored.account
        sealed[id] = stored.sealed
    }

    /// Forgets the account `id`.
    mutating func remove(_ id: String) {
        accounts[id] = nil
        sealed[id] = nil
    }

    /// Puts the opened `account` in place of the entry of `id`, unless a write has replaced that entry since `secrets` were read from it.
    mutating func replace(_ secrets: SealedSecrets, by account: Account, id: String) {
        guard let current = sealed.removeValue(forKey: id) else { return }
        guard current === secrets else {
            sealed[id] = current
            return
        }
        accounts[id] = account
        // A dictionary keeps its capacity when emptied; give the memory back.
        if sealed.isEmpty { sealed = [:] }
    }
}
