import Foundation

extension AccountService {
    /// `account` with a fresh token when it was due, or as it is; a transient failure keeps a still-valid token.
    func refreshedIfDue(_ account: Account) async throws(BrokerError) -> Account {
        let at = now()
        guard refresher.isDue(account, at: at) else { return account }
        // A reader of an expired token has nothing to fall back on, so it tries even while the account backs off.
        let outcome = try await refresher.refresh(account, respectingBackoff: !account.isExpired(at: at))
        switch outcome {
        case .refreshed(let fresh), .unchanged(let fresh):
            return fresh
        case .failed(let current, let error):
            if current.isExpired(at: now()) { throw error }
            return current
        }
    }

    /// The status API clients see: `reauthorization_required`, `expired` (past expiry and not refreshable), else `active`.
    ///
    /// An expired account that holds a refresh token its provider can use is
    /// `active`: the next read refreshes it.
    public func reportedStatus(of account: Account) -> String {
        switch account.status {
        case .reauthorizationRequired:
            return AccountStatus.reauthorizationRequired.rawValue
        case .active:
            let refreshable = refresher.refreshProvider(for: account) != nil
            return account.isExpired(at: now()) && !refreshable ? "expired" : AccountStatus.active.rawValue
        }
    }
}

extension AccountService {
    /// The account when it can be served without waiting: held in memory, active, unexpired
    /// and not due for refresh. Nil means "ask `account(id:)`", never "absent".
    public func accountNow(id: String) -> Account? {
        guard let reader = immediateReader, let account = reader.getNow(id: id),
              account.status == .active else { return nil }
        let at = now()
        guard !account.isExpired(at: at), !refresher.isDue(account, at: at) else { return nil }
        return account
    }
}
