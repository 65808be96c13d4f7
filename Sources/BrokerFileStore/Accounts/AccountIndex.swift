import BrokerCore
import Foundation

/// The file store's memory: every account by id, and the secrets of those not opened yet.
///
/// Accounts sit inline in one dictionary, as before sealed records were opened
/// lazily, so once everything is open a read is one lookup, whatever the
/// number of accounts. The sealed secrets wait in a second dictionary, which
/// the background pass empties (and releases) soon after start-up.
struct AccountIndex: Sendable {
    /// Every account by id; while ``sealed`` holds its id, its secrets are empty placeholders.
    /// Keyed by exact bytes: two spellings of one name that Swift calls equal are two accounts.
    private(set) var accounts: [ExactKey: Account] = [:]
    /// The secrets still sealed, by id.
    private(set) var sealed: [ExactKey: SealedSecrets] = [:]
    /// The accounts counted by status, kept with every change.
    private var tally = AccountStatusTally()

    /// An empty index with room for about `capacity` accounts.
    init(capacity: Int = 0) {
        accounts.reserveCapacity(capacity)
        sealed.reserveCapacity(capacity)
    }

    /// The entry of `id`, sealed or not.
    subscript(id: String) -> StoredAccount? {
        let key = ExactKey(id)
        guard let account = accounts[key] else { return nil }
        // Once everything is open (the usual state), a read is one lookup.
        guard !sealed.isEmpty, let secrets = sealed[key] else { return StoredAccount(account) }
        return StoredAccount(readable: account, sealed: secrets)
    }

    /// Every entry, or those of `provider`, sealed or not, in no particular order.
    func entries(provider: String?) -> [(id: String, stored: StoredAccount)] {
        var selected: [(id: String, stored: StoredAccount)] = []
        selected.reserveCapacity(provider == nil ? accounts.count : 0)
        for (key, account) in accounts where provider.map({ ExactKey.same(account.provider, $0) }) ?? true {
            let secrets = sealed.isEmpty ? nil : sealed[key]
            selected.append((key.string, secrets.map { StoredAccount(readable: account, sealed: $0) } ?? StoredAccount(account)))
        }
        return selected
    }

    /// Every account counted by status at `now`, from the tally (a sealed account's placeholder marks its refresh token).
    mutating func statusCounts(at now: Date) -> AccountStatusCounts {
        tally.counts(total: accounts.count, at: now)
    }

    /// The smallest id (UTF-8 byte order) among the accounts still sealed with key `keyID`, if any; visits every sealed entry.
    func firstSealed(with keyID: String) -> String? {
        var first: String?
        for (key, secrets) in sealed where secrets.all.contains(where: { $0.key.id == keyID }) {
            if first.map({ ExactKey.precedes(key.string, $0) }) ?? true { first = key.string }
        }
        return first
    }

    /// The ids of the accounts still sealed.
    var sealedIDs: [String] { sealed.keys.map(\.string) }

    /// Stores `stored` under `id`, replacing any entry.
    mutating func set(_ stored: StoredAccount, for id: String) {
        let previous = accounts.updateValue(stored.account, forKey: ExactKey(id))
        if let previous { tally.remove(previous) }
        tally.add(stored.account)
        sealed[ExactKey(id)] = stored.sealed
    }

    /// Stores `stored` under `key`, known to hold no entry yet (start-up's load): one lookup each, no tally removal.
    mutating func insertNew(_ stored: consuming StoredAccount, key: ExactKey) {
        tally.add(stored.account)
        if let secrets = stored.sealed { sealed[key] = secrets }
        // The record is consumed, so its account moves into the dictionary instead of being copied field by field.
        accounts[key] = (consume stored).account
    }

    /// Forgets the account `id`.
    mutating func remove(_ id: String) {
        if let previous = accounts.removeValue(forKey: ExactKey(id)) { tally.remove(previous) }
        sealed[ExactKey(id)] = nil
    }

    /// Puts the opened `account` in place of the entry of `id`, unless a write has replaced that entry since `secrets` were read from it.
    mutating func replace(_ secrets: SealedSecrets, by account: Account, id: String) {
        let key = ExactKey(id)
        guard let current = sealed.removeValue(forKey: key) else { return }
        guard current === secrets else {
            sealed[key] = current
            return
        }
        // Opening changes no status, expiry or refresh token's presence, so the tally stays as it is.
        accounts[key] = account
        // A dictionary keeps its capacity when emptied; give the memory back.
        if sealed.isEmpty { sealed = [:] }
    }
}
