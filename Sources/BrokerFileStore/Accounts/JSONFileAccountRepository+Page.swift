import BrokerCore

extension JSONFileAccountRepository {
    /// Up to `limit` accounts passing `filter` after the id `after`, sorted by id; see ``AccountRepository/page(after:limit:filter:)``.
    ///
    /// Filters the in-memory index (sealed accounts by their readable part, so
    /// only the page's own secrets are opened), then sorts what passed.
    public func page(after: String?, limit: Int, filter: AccountFilter) async throws(StoreError) -> AccountPage {
        let limit = max(1, limit)
        let entries = index.withLock { $0.entries(provider: filter.provider) }
        var chosen = entries.filter { entry in
            (after.map { ExactKey.precedes($0, entry.id) } ?? true) && filter.matches(entry.stored.account)
        }
        chosen.sort { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
        let accounts = try open(Array(chosen.prefix(limit)))
        return AccountPage(accounts: accounts, nextAfter: chosen.count > limit ? accounts.last?.id : nil)
    }
}
