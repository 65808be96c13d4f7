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

    /// One key's fetch as ``SingleFlight`` runs it: the cached token is what it reads, the client credentials grant the work.
    ///
    /// While another replica holds the lock, a cached token that has not
    /// expired is answered at once; without one the store is re-read every
    /// ``RefreshCoordinator/Policy/pollInterval`` until the holder's token
    /// shows up or the lock is free to take. While the key backs off, or when
    /// the fetch fails, a token that has not expired is still handed out.
    struct Fetch: SingleFlightWork {
        /// The service whose store, clock and events the fetch uses.
        let service: AppTokenService
        /// The cache key (``AppToken/key``).
        let key: String
        /// The provider's client credentials settings.
        let settings: ClientCredentialsSettings
        /// The normalized scope tokens asked for.
        let scopes: [String]
        /// The cached token the caller found due, if any.
        let seen: AppToken?

        var lockKey: String { AppTokenService.lockKey(for: key) }
        var backoffKey: String? { AppTokenService.backoffKey(for: key) }
        var initial: AppToken? { seen }

        func reread() async throws(BrokerError) -> AppToken? {
            try await service.read(key)
        }

        func settled(_ current: AppToken?) -> AppToken? {
            guard let current, !service.isDue(current, at: service.now()) else { return nil }
            return current
        }

        func backingOff(_ current: AppToken?, _ backoff: RefreshBackoff) throws(BrokerError) -> AppToken {
            try service.usable(current ?? seen, else: backoff.lastError)
        }

        /// Another replica is fetching: a token that has not expired serves meanwhile, without waiting.
        func meanwhile(_ current: AppToken?) -> AppToken? {
            guard let seen, !seen.isExpired(at: service.now()) else { return nil }
            return seen
        }

        func gaveUp(_ current: AppToken?) throws(BrokerError) -> AppToken {
            try service.usable(seen, else: .upstreamTimeout(step: ProviderStep.clientCredentials.rawValue))
        }

        /// Calls the provider and caches its token; a failure backs the key off and leaves an unexpired token to serve.
        func perform(_ current: AppToken?) async throws(BrokerError) -> AppToken {
            try await service.fetchHoldingLock(key: key, settings: settings, scopes: scopes, known: current ?? seen)
        }
    }

    /// With the lock held and the store just re-read: calls the provider and caches what it issues.
    nonisolated func fetchHoldingLock(key: String, settings: ClientCredentialsSettings, scopes: [String], known: AppToken?)
        async throws(BrokerError) -> AppToken
    {
        let client = ClientCredentialsClient(settings: settings, call: context.scoped(to: settings.name).call)
        let scope = AppTokenScope.text(scopes)
        let grant: TokenGrant
        do {
            grant = try await client.fetch(scopes: scopes)
        } catch {
            await flight.recordFailure(error, for: Self.backoffKey(for: key))
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
        await flight.clearBackoff(Self.backoffKey(for: key))
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
}
