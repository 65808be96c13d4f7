import Foundation

extension AppTokenService {
    /// The lock key of `key`'s fetch, beside the accounts' `refresh:` keys.
    static func lockKey(for key: String) -> String {
        "apptoken:" + key
    }

    /// The backoff key of `key`, beside the accounts' ids (which never start with `app:`).
    static func backoffKey(for key: String) -> String {
        "app:" + key
    }

    /// This process's one fetch for `key`, as a result so joined callers can share it.
    ///
    /// While another replica holds the lock, a cached token that has not
    /// expired is answered at once; without one the store is polled every
    /// ``RefreshCoordinator/Policy/pollInterval`` until the holder's token shows
    /// up or the lock is free to take, for at most twice the lock TTL.
    nonisolated func lead(key: String, settings: ClientCredentialsSettings, scopes: [String], seen: AppToken?) async -> Result<
        AppToken, BrokerError
    > {
        do throws(BrokerError) {
            if let wait = await activeBackoff(key: key) { return .success(try usable(seen, else: wait.lastError)) }
            let lockKey = Self.lockKey(for: key)
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(policy.lockTTL * 2)
            while true {
                if let owner = try await acquireLock(lockKey) {
                    let result: AppToken
                    do throws(BrokerError) {
                        result = try await fetchHoldingLock(key: key, settings: settings, scopes: scopes, seen: seen)
                    } catch {
                        await releaseLock(lockKey, token: owner)
                        throw error
                    }
                    await releaseLock(lockKey, token: owner)
                    return .success(result)
                }
                // Another replica is fetching: a token that has not expired serves meanwhile, without waiting.
                if let seen, !seen.isExpired(at: now()) { return .success(seen) }
                guard clock.now < deadline else {
                    return .success(try usable(seen, else: .upstreamTimeout(step: ProviderStep.clientCredentials.rawValue)))
                }
                try? await Task.sleep(for: .seconds(policy.pollInterval))
                if let current = try await read(key), !isDue(current, at: now()) { return .success(current) }
            }
        } catch {
            return .failure(error)
        }
    }

    /// With the lock held: re-reads the store and the backoff, since another replica may have just fetched or failed, then calls the provider.
    nonisolated func fetchHoldingLock(key: String, settings: ClientCredentialsSettings, scopes: [String], seen: AppToken?)
        async throws(BrokerError) -> AppToken
    {
        let current = try await read(key)
        if let current, !isDue(current, at: now()) { return current }
        let known = current ?? seen
        if let wait = await activeBackoff(key: key) { return try usable(known, else: wait.lastError) }
        let client = ClientCredentialsClient(settings: settings, call: context.scoped(to: settings.name).call)
        let scope = AppTokenScope.text(scopes)
        let grant: TokenGrant
        do {
            grant = try await client.fetch(scopes: scopes)
        } catch {
            await recordFailure(key: key, error)
            onEvent(Event(provider: settings.name, scope: scope, error: error.error))
            return try usable(known, else: error.error)
        }
        let issuedAt = now()
        let token = AppToken(
            provider: settings.name, requestedScope: scope, accessToken: grant.accessToken, tokenType: grant.tokenType,
            scope: grant.scope, issuedAt: issuedAt, expiresAt: grant.expiresIn.map { issuedAt.addingTimeInterval(TimeInterval($0)) })
        let keepUntil = token.expiresAt ?? issuedAt.addingTimeInterval(Self.unknownLifetimeReuse)
        // A token that cannot be cached is still good to hand out; the next caller asks again.
        try? await store.store(token, keepUntil: keepUntil, at: issuedAt)
        await clearBackoff(key: key)
        onEvent(Event(provider: settings.name, scope: scope, error: nil))
        return token
    }

    /// `token` when it has not expired; otherwise throws `error`.
    nonisolated func usable(_ token: AppToken?, else error: BrokerError) throws(BrokerError) -> AppToken {
        if let token, !token.isExpired(at: now()) { return token }
        throw error
    }

    /// The token cached under `key`; a store that cannot answer is a storage failure.
    nonisolated func read(_ key: String) async throws(BrokerError) -> AppToken? {
        do { return try await store.token(for: key) } catch { throw BrokerError(error) }
    }

    /// Takes the lock for ``RefreshCoordinator/Policy/lockTTL``; a lock store that cannot answer is a storage failure.
    nonisolated func acquireLock(_ key: String) async throws(BrokerError) -> String? {
        do { return try await lock.acquire(key: key, ttl: policy.lockTTL) } catch { throw BrokerError(error) }
    }

    /// Gives the lock back; if that fails, its TTL frees it.
    nonisolated func releaseLock(_ key: String, token: String) async {
        _ = try? await lock.release(key: key, token: token)
    }

    /// Counts a failed fetch of `key` and pushes the next one back, as account refreshes do
    /// (``RefreshCoordinator/Policy/backoff(after:failing:at:)``).
    func recordFailure(key: String, _ failure: RefreshFailure) async {
        let previous = await currentBackoff(key: key)
        let at = now()
        let state = policy.backoff(after: previous, failing: failure, at: at)
        backoff[ExactKey(key)] = state
        try? await backoffStore.record(state, for: Self.backoffKey(for: key), at: at)
    }

    /// Forgets `key`'s failures, here and in the shared store.
    func clearBackoff(key: String) async {
        backoff[ExactKey(key)] = nil
        try? await backoffStore.clear(accountID: Self.backoffKey(for: key))
    }

    /// `key`'s backoff from the shared store, or this process's last record when the store cannot be read.
    nonisolated func currentBackoff(key: String) async -> RefreshBackoff? {
        do {
            return try await backoffStore.backoff(for: Self.backoffKey(for: key))
        } catch {
            return await backoff[ExactKey(key)]
        }
    }

    /// The backoff that holds `key` back at this moment, or nil when a fetch may start.
    nonisolated func activeBackoff(key: String) async -> RefreshBackoff? {
        guard let current = await currentBackoff(key: key), current.isBackingOff(at: now()) else { return nil }
        return current
    }
}
