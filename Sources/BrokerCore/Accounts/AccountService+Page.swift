extension AccountService {
    /// The statuses `GET /accounts?status=` accepts: what ``reportedStatus(of:)`` answers.
    public static let reportedStatuses: Set<String> = [
        "active", "expired", "reauthorization_required", "refresh_exhausted", "invalid",
    ]

    /// One page of the stored accounts passing `filter` and, when given, reporting `status` now; sorted by id, nothing refreshed.
    ///
    /// `expired` is decided here (``reportedStatus(of:)``: expired and not
    /// refreshable), so the repository gets it as the filter's further test.
    public func page(after: AccountID?, limit: Int, filter: AccountFilter, status: String?) async throws(BrokerError) -> AccountPage {
        do { return try await accounts.page(after: after, limit: limit, filter: withStatus(filter, status)) } catch {
            throw BrokerError(error)
        }
    }

    /// The same page among the accounts `ids` (a browser session's): ids no longer stored are skipped.
    public func page(ids: [AccountID], after: AccountID?, limit: Int, filter: AccountFilter, status: String?) async throws(BrokerError)
        -> AccountPage
    {
        AccountPage.slice(
            try await list(ids: ids, provider: filter.provider), after: after, limit: max(1, limit), filter: withStatus(filter, status))
    }

    /// `filter` with the test that the account reports `status`, when one is given.
    private func withStatus(_ filter: AccountFilter, _ status: String?) -> AccountFilter {
        guard let status else { return filter }
        var filter = filter
        let earlier = filter.also
        filter.also = { [self] account in
            (earlier?(account) ?? true) && reportedStatus(of: account) == status
        }
        return filter
    }
}
