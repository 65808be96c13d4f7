import Foundation

extension AccountService {
    /// `account` with a fresh token when it was due, or as it is; a transient failure keeps a still-valid token.
    ///
    /// Every read respects the backoff, expired or not: a reader of an expired
    /// token that calls the provider during a rate limit only prolongs it, so
    /// it gets the last try's error instead, as if it had made that try.
    func refreshedIfDue(_ account: Account) async throws(BrokerError) -> Account {
        guard refresher.isDue(account, at: now()) else { return account }
        switch try await refresher.refresh(account, respectingBackoff: true) {
        case .refreshed(let fresh), .unchanged(let fresh):
            return fresh
        case .failed(let current, let error), .backingOff(let current, let error, _):
            if current.isExpired(at: now()) { throw error }
            return current
        }
    }

    /// Refreshes account `id` now, due or not, for an operator who asks: the account as stored afterwards.
    ///
    /// Single flight like a read's refresh, in this process and across
    /// replicas; an account refreshed less than
    /// ``RefreshCoordinator/Policy/forcedRefreshReuse`` ago (here or on another
    /// replica) comes back as it is, with that refresh's token.
    /// The backoff still holds: while the account backs off after transient
    /// failures (a provider's rate limit among them) the last try's error comes
    /// back at once, without a provider call, as it does for readers. This is
    /// the one way besides a new sign-in to try a `refresh_exhausted` account
    /// again: a success makes it active (`account.recovered`), a failure leaves
    /// it exhausted and starts a new backoff. Refuses
    /// with notFound, reauthorizationRequired (the grant is dead, or the
    /// provider just rejected the refresh token), notRefreshable (no refresh
    /// token, or a provider that cannot refresh), or the provider's error.
    public func refreshNow(id: AccountID) async throws(BrokerError) -> Account {
        let found: Account?
        do { found = try await accounts.get(id: id) } catch { throw BrokerError(error) }
        guard let account = found else { throw .notFound }
        if account.status == .reauthorizationRequired { throw .reauthorizationRequired }
        guard refresher.refreshExchange(for: account) != nil else { throw .notRefreshable }
        switch try await refresher.refresh(account, respectingBackoff: true, force: true) {
        case .refreshed(let fresh): return fresh
        // Forced, nothing but a provider that stopped refreshing meanwhile leaves an account unchanged.
        case .unchanged: throw .notRefreshable
        case .failed(_, let error), .backingOff(_, let error, _): throw error
        }
    }

    /// Whole seconds until the next refresh try of `accountID` while it backs off, for a `Retry-After` answer; nil when it does not.
    public func retryAfter(accountID: AccountID) async -> Int? {
        await refresher.flight.retryAfterSeconds(accountID.string)
    }

    /// The status API clients see: `reauthorization_required`, `refresh_exhausted`, `expired` (past expiry and not refreshable),
    /// else `active`.
    ///
    /// An expired account that holds a refresh token its provider can use is
    /// `active`: the next read refreshes it.
    public func reportedStatus(of account: Account) -> String {
        switch account.status {
        case .reauthorizationRequired:
            return AccountStatus.reauthorizationRequired.rawValue
        case .refreshExhausted:
            return AccountStatus.refreshExhausted.rawValue
        case .invalid:
            return AccountStatus.invalid.rawValue
        case .active:
            let refreshable = refresher.refreshExchange(for: account) != nil
            return account.isExpired(at: now()) && !refreshable ? "expired" : AccountStatus.active.rawValue
        }
    }
}

extension AccountService {
    /// The account when it can be served without waiting: held in memory, active, unexpired
    /// and not due for refresh. Nil means "ask `account(id:)`", never "absent".
    public func accountNow(id: AccountID) -> Account? {
        guard let reader = immediateReader, let account = reader.getNow(id: id),
            account.status == .active
        else { return nil }
        let at = now()
        guard !account.isExpired(at: at), !refresher.isDue(account, at: at) else { return nil }
        return account
    }

    /// ``accountNow(id:)`` in the form the store holds it (``HeldAccount``), for `GET /account`'s inline path:
    /// the same accounts are served, without building a whole ``Account`` for each read.
    public func heldNow(id: AccountID) -> HeldAccount? {
        guard let reader = immediateReader, let held = reader.heldNow(id: id), servesNow(held) else { return nil }
        return held
    }

    /// Whether ``heldNow(id:)`` would hand out `held` now: active, unexpired and not due for refresh.
    public func servesNow(_ held: HeldAccount) -> Bool {
        guard held.status == .active else { return false }
        let at = now()
        return !held.isExpired(at: at) && !refresher.isDue(held, at: at)
    }
}
