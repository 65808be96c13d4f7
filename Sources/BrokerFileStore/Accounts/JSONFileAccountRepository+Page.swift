import BrokerCore

extension JSONFileAccountRepository {
    /// How many ids one turn of the index lock hands out while a page is gathered.
    static let pageBatch = 512

    /// Up to `limit` accounts passing `filter` after the id `after`, sorted by id; see ``AccountRepository/page(after:limit:filter:)``.
    ///
    /// Walks the index's id order from `after` (the end user's own ids when the filter names one, the provider's range
    /// of ids when it names a provider) in batches, checking the rest of the filter on each entry outside the lock
    /// (sealed accounts by their readable part, so only the page's own secrets are opened). A page costs what it
    /// visits, not the size of the store.
    public func page(after: AccountID?, limit: Int, filter: AccountFilter) async throws(StoreError) -> AccountPage {
        let limit = max(1, limit)
        var chosen: [(id: String, stored: IndexedAccount)] = []
        var position = after?.string
        while chosen.count <= limit {
            let batch = index.withLock {
                $0.candidates(after: position, provider: filter.provider, endUser: filter.endUserID, limit: Self.pageBatch)
            }
            for entry in batch where filter.matches(entry.stored.account) {
                chosen.append(entry)
                if chosen.count > limit { break }
            }
            guard batch.count == Self.pageBatch, let last = batch.last else { break }
            position = last.id
        }
        let accounts = try open(Array(chosen.prefix(limit)))
        return AccountPage(accounts: accounts, nextAfter: chosen.count > limit ? accounts.last?.accountID : nil)
    }
}
