/// What `GET /accounts` narrows the list to; every condition given must hold.
public struct AccountFilter: Sendable {
    /// Only accounts of this provider.
    public var provider: String?
    /// Only accounts of this end user (exact bytes).
    public var endUserID: String?
    /// Only accounts carrying every one of these tags with exactly this value.
    public var tags: [String: String]
    /// A further test the repository cannot answer from the record alone (the reported status, which depends on
    /// the clock and the provider); applied to each account that passed the others.
    public var also: (@Sendable (Account) -> Bool)?

    /// A filter; with no arguments it lets every account through.
    public init(
        provider: String? = nil, endUserID: String? = nil, tags: [String: String] = [:],
        also: (@Sendable (Account) -> Bool)? = nil
    ) {
        self.provider = provider
        self.endUserID = endUserID
        self.tags = tags
        self.also = also
    }

    /// Whether `account` passes every condition.
    public func matches(_ account: Account) -> Bool {
        if let provider, !ExactKey.same(provider, account.provider) { return false }
        if let endUserID {
            guard let owner = account.endUser, ExactKey.same(owner.id, endUserID) else { return false }
        }
        for (key, value) in tags {
            guard let held = account.tags[key], ExactKey.same(held, value) else { return false }
        }
        return also?(account) ?? true
    }
}

/// One page of accounts in id order (UTF-8 bytes), and where the next one starts.
public struct AccountPage: Sendable, Equatable {
    /// The accounts, sorted by id.
    public var accounts: [Account]
    /// The id of the last account when more may follow: the `after` of the next page; nil on the last page.
    public var nextAfter: AccountID?

    /// Creates a page.
    public init(accounts: [Account], nextAfter: AccountID?) {
        self.accounts = accounts
        self.nextAfter = nextAfter
    }

    /// The page of `limit` accounts of `sorted` (sorted by id) that pass `filter` and come after the id `after`.
    ///
    /// Keyset paging: the next page starts after the last id returned, so an
    /// account added or removed meanwhile moves no other across a page boundary:
    /// every account there throughout is listed exactly once.
    public static func slice(_ sorted: [Account], after: AccountID?, limit: Int, filter: AccountFilter) -> AccountPage {
        var page: [Account] = []
        for account in sorted where after.map({ ExactKey.precedes($0.string, account.id) }) ?? true && filter.matches(account) {
            if page.count == limit { return AccountPage(accounts: page, nextAfter: page.last?.accountID) }
            page.append(account)
        }
        return AccountPage(accounts: page, nextAfter: nil)
    }
}

extension AccountRepository {
    /// Up to `limit` (≥ 1) accounts passing `filter` whose id sorts after `after`, sorted by id (UTF-8 byte order).
    ///
    /// This default reads the provider's list and filters it in memory; the
    /// file store and the Redis store answer from their indexes.
    public func page(after: AccountID?, limit: Int, filter: AccountFilter) async throws(StoreError) -> AccountPage {
        AccountPage.slice(try await list(provider: filter.provider), after: after, limit: max(1, limit), filter: filter)
    }
}
