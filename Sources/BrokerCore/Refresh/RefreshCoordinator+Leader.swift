import Foundation

extension RefreshCoordinator {
    /// The lock key of `accountID`'s refresh.
    static func lockKey(for accountID: String) -> String {
        "refresh:" + accountID
    }

    /// One account's refresh as ``SingleFlight`` runs it: the account is what it reads, the provider's refresh grant the work.
    struct Refresh: SingleFlightWork {
        /// The coordinator whose repository, providers and backoff the refresh uses.
        let coordinator: RefreshCoordinator
        /// The account as the caller read it.
        let initial: Account
        /// Whether a backoff after transient failures holds this refresh back.
        let respectingBackoff: Bool
        /// Whether the account is refreshed even when it is not due.
        let force: Bool

        var lockKey: String { RefreshCoordinator.lockKey(for: initial.id) }
        var backoffKey: String? { respectingBackoff ? initial.id : nil }

        func reread() async throws(BrokerError) -> Account {
            try await coordinator.read(initial.accountID)
        }

        func settled(_ current: Account) throws(BrokerError) -> Outcome? {
            try coordinator.settledOutcome(current, comparedWith: initial, force: force)
        }

        func backingOff(_ current: Account, _ backoff: RefreshBackoff) -> Outcome {
            .backingOff(current, lastError: backoff.lastError, until: backoff.notBefore)
        }

        func meanwhile(_ current: Account) -> Outcome? { nil }

        func gaveUp(_ current: Account) -> Outcome {
            .failed(current, .upstreamTimeout(step: ProviderStep.tokenRefresh.rawValue))
        }

        /// Calls the provider with the refresh token just re-read; an account that cannot be refreshed stays unchanged.
        func perform(_ fresh: Account) async throws(BrokerError) -> Outcome {
            guard let exchange = coordinator.refreshExchange(for: fresh), let refreshToken = fresh.refreshToken else {
                return .unchanged(fresh)
            }
            return try await coordinator.callProvider(for: fresh, with: exchange, presenting: refreshToken)
        }
    }

    /// The outcome when `current` needs no refresh by this caller, or nil when it still does.
    ///
    /// Tokens that differ from what the caller read mean someone else refreshed
    /// or re-authorized the account; a new token is never refreshed again at once,
    /// not even when forced. Nor is one refreshed within
    /// ``Policy/forcedRefreshReuse`` of its last refresh, by whichever replica:
    /// `refreshedAt` lives in the shared record, so a second forced refresh
    /// gets the first one's token. Without `force`, an account that is not due is settled as it is, and one that
    /// became `refresh_exhausted` meanwhile is refused.
    nonisolated func settledOutcome(_ current: Account, comparedWith initial: Account, force: Bool) throws(BrokerError) -> Outcome? {
        if current.status == .reauthorizationRequired { throw .reauthorizationRequired }
        // Given up on (here or by another replica): only a forced refresh tries it again.
        if current.status == .refreshExhausted && !force && current.refreshToken == initial.refreshToken { throw .refreshExhausted }
        if current.accessToken != initial.accessToken || current.refreshToken != initial.refreshToken { return .refreshed(current) }
        if force, let refreshedAt = current.refreshedAt, abs(now().timeIntervalSince(refreshedAt)) < Policy.forcedRefreshReuse {
            return .refreshed(current)
        }
        if !force && !isDue(current, at: now()) { return .unchanged(current) }
        return nil
    }

    /// The stored account `id`; notFound when it was deleted.
    nonisolated func read(_ id: AccountID) async throws(BrokerError) -> Account {
        let found: Account?
        do { found = try await accounts.get(id: id) } catch { throw BrokerError(error) }
        guard let found else { throw .notFound }
        return found
    }
}
