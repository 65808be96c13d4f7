import Foundation

extension AccountService {
    /// Changes the end user (when `endUser` is given: `.some(nil)` clears it), the tags (when given, replacing
    /// them all) and the metadata (when given: `.some(nil)` clears it; text checked by ``AccountMetadata/text(of:)``) of
    /// account `id`, without a sign-in, in the same durable step as its `account.updated` event, which carries the
    /// metadata.
    ///
    /// Nothing else changes: not the tokens, not `updated_at`'s meaning for them (it is set, as for any write), not
    /// the status. Throws ``BrokerError/notFound`` when the account is not stored.
    public func edit(id: AccountID, endUser: EndUser??, tags: [String: String]?, metadata: String?? = nil) async throws(BrokerError)
        -> Account
    {
        let at = now()
        let transform: @Sendable (Account?) throws(StoreError) -> Account? = { existing in
            guard var account = existing else { return nil }
            if let endUser { account.endUser = endUser }
            if let tags { account.tags = tags }
            if let metadata { account.metadata = metadata }
            account.updatedAt = at
            return account
        }
        let stored: Account?
        do {
            if let events {
                stored = try await accounts.update(
                    id: id,
                    reporting: { before, after in
                        guard before != nil, let after else { return nil }
                        var data = BrokerEventData(account: after)
                        data.metadata = AccountMetadata.value(of: after.metadata)
                        return (.accountUpdated, data)
                    }, to: events, transform)
            } else {
                stored = try await accounts.update(id: id, transform)
            }
        } catch {
            throw BrokerError(error)
        }
        guard let stored else { throw .notFound }
        return stored
    }
}
