import BrokerCore

extension RedisAccountRepository {
    /// Up to `limit` accounts passing `filter` after the id `after`, sorted by id; see ``AccountRepository/page(after:limit:filter:)``.
    ///
    /// Reads the narrowest index set (the end user's, else the provider's, else
    /// every id), sorts the ids after `after`, and reads records in batches only
    /// until the page and one more match are found. Each record is checked
    /// against the whole filter, so an index entry out of date costs a read and
    /// never a wrong answer. The id set itself is read whole for every page.
    public func page(after: AccountID?, limit: Int, filter: AccountFilter) async throws(StoreError) -> AccountPage {
        let limit = max(1, limit)
        let index = filter.endUserID.map(endUserIndexKey) ?? filter.provider.map(providerIndexKey) ?? indexKey
        let members = try await run { () async throws(RedisError) in try await self.client.command("SMEMBERS", index) }
        guard let ids = members.array?.compactMap(\.string) else {
            throw .unavailable("redis: SMEMBERS \(index) did not return a set")
        }
        let sorted = ids.filter { id in after.map { ExactKey.precedes($0.string, id) } ?? true }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var accounts: [Account] = []
        var start = 0
        while start < sorted.count {
            // A batch a little larger than what is still wanted: most filters match most of what their index lists.
            let batch = Array(sorted[start..<min(start + min(500, limit + 1 - accounts.count), sorted.count)])
            start += batch.count
            let command = RedisCommand(["MGET"] + batch.map(accountKey))
            let reply = try await run { () async throws(RedisError) in try await self.client.command(command) }
            guard let values = reply.array, values.count == batch.count else {
                throw .unavailable("redis: MGET did not return one value per key")
            }
            for (id, value) in zip(batch, values) {
                guard let account = try decode(value, key: accountKey(id)), filter.matches(account) else { continue }
                if accounts.count == limit { return AccountPage(accounts: accounts, nextAfter: accounts.last?.accountID) }
                accounts.append(account)
            }
        }
        return AccountPage(accounts: accounts, nextAfter: nil)
    }
}
