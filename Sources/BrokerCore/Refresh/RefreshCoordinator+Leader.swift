import Foundation

extension RefreshCoordinator {
    /// The lock key of `accountID`'s refresh.
    static func lockKey(for accountID: String) -> String {
        "refresh:" + accountID
    }

    /// This process's one refresh of `initial`'s account, as a result so followers can share it.
    nonisolated func lead(_ initial: Account, respectingBackoff: Bool, force: Bool) async -> Result<Outcome, BrokerError> {
        do {
            if respectingBackoff, let wait = await activeBackoff(accountID: initial.id) {
                return .success(.backingOff(initial, lastError: wait.lastError, until: wait.notBefore))
            }
            return .success(try await leadAcrossReplicas(initial, respectingBackoff: respectingBackoff, force: force))
        } catch {
            return .failure(error)
        }
    }

    /// Takes the cross-replica lock and refreshes, or waits for the replica that holds it.
    ///
    /// While another replica holds the lock, the repository is polled every
    /// ``Policy/pollInterval`` until that replica's result is stored (the
    /// token or status changed, or the account is no longer due) or the lock
    /// is free to take. The wait ends after twice the lock TTL at most; the
    /// lock has expired by then, so only a replica that keeps re-taking it
    /// makes this one give up with a transient failure.
    nonisolated func leadAcrossReplicas(_ initial: Account, respectingBackoff: Bool, force: Bool) async throws(BrokerError) -> Outcome {
        let key = Self.lockKey(for: initial.id)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(policy.lockTTL * 2)
        var current = initial
        while true {
            if let settled = try settledOutcome(current, comparedWith: initial, force: force) { return settled }
            if let token = try await acquireLock(key) {
                let outcome: Outcome
                do {
                    outcome = try await refreshHoldingLock(initial, respectingBackoff: respectingBackoff, force: force)
                } catch {
                    await releaseLock(key, token: token)
                    throw error
                }
                await releaseLock(key, token: token)
                return outcome
            }
            guard clock.now < deadline else { return .failed(current, .upstreamTimeout(step: ProviderStep.tokenRefresh.rawValue)) }
            try? await Task.sleep(for: .seconds(policy.pollInterval))
            current = try await read(initial.id)
        }
    }

    /// With the lock held: re-reads the account and its backoff, since another replica may have just refreshed (and rotated) it or failed, then calls the provider.
    nonisolated func refreshHoldingLock(_ initial: Account, respectingBackoff: Bool, force: Bool) async throws(BrokerError) -> Outcome {
        let fresh = try await read(initial.id)
        if let settled = try settledOutcome(fresh, comparedWith: initial, force: force) { return settled }
        if respectingBackoff, let wait = await activeBackoff(accountID: fresh.id) {
            return .backingOff(fresh, lastError: wait.lastError, until: wait.notBefore)
        }
        guard let exchange = refreshExchange(for: fresh), let refreshToken = fresh.refreshToken else { return .unchanged(fresh) }
        return try await callProvider(for: fresh, with: exchange, presenting: refreshToken)
    }

    /// The outcome when `current` needs no refresh by this caller, or nil when it still does.
    ///
    /// Tokens that differ from what the caller read mean someone else refreshed
    /// or re-authorized the account; a new token is never refreshed again at once,
    /// not even when forced. Nor is one refreshed within
    /// ``Policy/forcedRefreshReuse`` of its last refresh, by whichever replica:
    /// `refreshedAt` lives in the shared record, so a second forced refresh
    /// gets the first one's token. Without `force`, an account that is not due is settled as it is.
    nonisolated func settledOutcome(_ current: Account, comparedWith initial: Account, force: Bool) throws(BrokerError) -> Outcome? {
        if current.status == .reauthorizationRequired { throw .reauthorizationRequired }
        if current.accessToken != initial.accessToken || current.refreshToken != initial.refreshToken { return .refreshed(current) }
        if force, let refreshedAt = current.refreshedAt, abs(now().timeIntervalSince(refreshedAt)) < Policy.forcedRefreshReuse {
            return .refreshed(current)
        }
        if !force && !isDue(current, at: now()) { return .unchanged(current) }
        return nil
    }

    /// The stored account `id`; notFound when it was deleted.
    nonisolated func read(_ id: String) async throws(BrokerError) -> Account {
        let found: Account?
        do { found = try await accounts.get(id: id) } catch { throw BrokerError(error) }
        guard let found else { throw .notFound }
        return found
    }

    /// Takes the lock for ``Policy/lockTTL``; a lock store that cannot answer is a storage failure.
    nonisolated func acquireLock(_ key: String) async throws(BrokerError) -> String? {
        do { return try await lock.acquire(key: key, ttl: policy.lockTTL) } catch { throw BrokerError(error) }
    }

    /// Gives the lock back; if that fails, its TTL frees it.
    nonisolated func releaseLock(_ key: String, token: String) async {
        _ = try? await lock.release(key: key, token: token)
    }
}
