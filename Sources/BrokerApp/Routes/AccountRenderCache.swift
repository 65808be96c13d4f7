import BrokerCore
import Foundation
import Synchronization

/// The parts of `GET /account`'s body that hold no secret (``AccountJSON/Parts``), rendered once per version of an
/// account and kept by id, so that a read renders only its token and status.
///
/// An entry is used only for an account whose rendered fields are the very values it was made from: each string,
/// list and table is the same storage (compared by identity, which the entry keeps alive, so an address is never
/// reused while compared) and each date the same bits. Any write that changes one of them, in this process or in
/// another broker sharing the store, makes the entry miss, and the read renders and keeps the new parts; so there is
/// nothing to invalidate. A store that hands out new storage on every read only ever misses: correct, and no
/// faster. The entries hold no token, ID token or extras: the secrets are written from the account on every read.
/// At most ``capacity`` accounts are kept; when full, all are dropped and the cache fills again.
final class AccountRenderCache: Sendable {
    /// The parts of one account and the fields they were made from.
    private final class Entry: Sendable {
        let parts: AccountJSON.Parts
        /// A token read's opening audit fields (the id it was kept under, the provider and the end user's id, all
        /// compared below), so that a read's audit event copies them too.
        let audit: AuditTrail.Opening
        let provider: String
        let uid: String
        let tokenType: String?
        let scope: String?
        let screenName: String?
        let endUser: EndUser?
        let tags: [String: String]
        let settings: [String: String]
        let metadata: String?
        let dates: (Double?, Double, Double, Double?)

        init(_ account: Account, id: String) {
            parts = AccountJSON.parts(account)
            audit = AuditTrail.Opening(.tokenRead, account: id, provider: account.provider, endUser: AuditEvent.endUser(of: account))
            provider = account.provider
            uid = account.uid
            tokenType = account.tokenType
            scope = account.scope
            screenName = account.screenName
            endUser = account.endUser
            tags = account.tags
            settings = account.settings
            metadata = account.metadata
            dates = Self.dates(of: account)
        }

        /// The rendered dates' seconds.
        static func dates(of a: Account) -> (Double?, Double, Double, Double?) {
            (
                a.expiresAt?.timeIntervalSinceReferenceDate, a.createdAt.timeIntervalSinceReferenceDate,
                a.updatedAt.timeIntervalSinceReferenceDate, a.refreshedAt?.timeIntervalSinceReferenceDate
            )
        }

        /// Whether `a`'s rendered fields are the values these parts were made from.
        func renders(_ a: Account) -> Bool {
            let (expires, created, updated, refreshed) = dates
            let (otherExpires, otherCreated, otherUpdated, otherRefreshed) = Self.dates(of: a)
            return same(provider, a.provider) && same(uid, a.uid) && same(tokenType, a.tokenType) && same(scope, a.scope)
                && same(screenName, a.screenName) && same(endUser?.id, a.endUser?.id)
                && same(endUser?.email, a.endUser?.email) && same(endUser?.name, a.endUser?.name)
                && identical(tags, a.tags) && identical(settings, a.settings) && same(metadata, a.metadata)
                && expires?.bitPattern == otherExpires?.bitPattern && created.bitPattern == otherCreated.bitPattern
                && updated.bitPattern == otherUpdated.bitPattern && refreshed?.bitPattern == otherRefreshed?.bitPattern
        }

        /// Whether two optional strings are both absent or the same storage (a small string: the same bytes).
        private func same(_ lhs: String?, _ rhs: String?) -> Bool {
            switch (lhs, rhs) {
            case (nil, nil): true
            case (let lhs?, let rhs?): identical(lhs, rhs)
            default: false
            }
        }

        /// Whether two values are the same bits: for a string or a table, the same storage or the same inline
        /// bytes. (`==` on strings would also call two spellings of one character equal, which render differently.)
        private func identical<T>(_ lhs: T, _ rhs: T) -> Bool {
            withUnsafeBytes(of: lhs) { left in
                withUnsafeBytes(of: rhs) { right in
                    var offset = 0
                    while offset + 8 <= left.count {
                        if left.load(fromByteOffset: offset, as: UInt64.self) != right.load(fromByteOffset: offset, as: UInt64.self) {
                            return false
                        }
                        offset += 8
                    }
                    while offset < left.count {
                        if left[offset] != right[offset] { return false }
                        offset += 1
                    }
                    return true
                }
            }
        }
    }

    /// How many accounts' parts are kept at most.
    let capacity: Int
    private let entries = Mutex<[String: Entry]>([:])

    /// An empty cache for up to `capacity` accounts.
    init(capacity: Int = 16_384) {
        self.capacity = capacity
    }

    /// The parts of `account`'s rendering, whose id is `id`: kept ones when they were made from the same fields,
    /// else rendered now and kept.
    func parts(of account: Account, id: String) -> AccountJSON.Parts {
        rendering(of: account, id: id).parts
    }

    /// ``parts(of:id:)``, and the opening fields of a token read's audit event about `account` (its id being `id`,
    /// the very bytes the store found the account by, so `provider:uid`).
    ///
    /// The entry is found by `id` as Swift compares strings, but used only when the account's provider and uid are
    /// the storage it was made from; these spell the id the entry was made for, so its audit fields name these bytes.
    func rendering(of account: Account, id: String) -> (parts: AccountJSON.Parts, audit: AuditTrail.Opening) {
        if let entry = entries.withLock({ $0[id] }), entry.renders(account) { return (entry.parts, entry.audit) }
        let entry = Entry(account, id: id)
        entries.withLock { entries in
            if entries.count >= capacity, entries[id] == nil { entries.removeAll(keepingCapacity: true) }
            entries[id] = entry
        }
        return (entry.parts, entry.audit)
    }

    /// How many accounts' parts are kept.
    var count: Int { entries.withLock { $0.count } }
}
