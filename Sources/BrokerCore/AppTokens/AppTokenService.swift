import Foundation

/// Hands out app tokens: client credentials tokens (RFC 6749 §4.4), cached until their refresh margin and fetched anew one at a time.
///
/// A token is cached per provider and normalized scope set in an
/// ``AppTokenStore`` (Redis when replicas share one, so no replica fetches
/// what another already has). When it is due, one fetch runs through the same
/// ``SingleFlight`` as account refreshes: later callers in this process join
/// it, and across replicas it first takes the ``RefreshLock`` the account
/// refresh uses; a replica that cannot get it re-reads the store until the
/// holder's token shows up or the lock frees. A failed fetch puts the key into
/// the same exponential backoff as a failed account refresh, lengthened by the
/// provider's `Retry-After` and shared through the ``RefreshBackoffStore``:
/// while it lasts the provider is not called, a cached token that has not
/// expired is still handed out, and callers without one get the last error.
public actor AppTokenService {
    /// One fetch from a provider, for logs and metrics; it never holds a token.
    public struct Event: Sendable, Equatable {
        /// The provider called.
        public var provider: String
        /// The normalized scope asked for.
        public var scope: String
        /// The error the fetch ended with; nil when a token was issued.
        public var error: BrokerError?

        /// Creates an event.
        public init(provider: String, scope: String, error: BrokerError?) {
            self.provider = provider
            self.scope = scope
            self.error = error
        }
    }

    /// The providers, for token endpoints, client credentials and default scopes.
    nonisolated let registry: ProviderRegistry
    /// The outbound client, clock and call observer.
    nonisolated let context: ExchangeContext
    /// Where tokens are cached.
    nonisolated let store: any AppTokenStore
    /// One fetch per key at a time, here and across replicas, with the shared lock and backoff.
    nonisolated let flight: SingleFlight<AppToken>
    /// Margin, lock TTL, polling and backoff: the account refresh's settings.
    public nonisolated let policy: RefreshCoordinator.Policy
    /// The injected clock.
    nonisolated let now: @Sendable () -> Date
    /// Told about every fetch; must not block.
    nonisolated let onEvent: @Sendable (Event) -> Void

    /// Seconds a token whose answer had no `expires_in` is reused before the provider is asked again.
    ///
    /// RFC 6749 §5.1 leaves such a lifetime to the provider's documentation;
    /// a short reuse keeps a token that does expire from being handed out stale for long.
    public static let unknownLifetimeReuse: TimeInterval = 300

    /// Creates the service; `lock` and `backoffStore` are the account refresh's, shared with other replicas on Redis.
    public init(
        registry: ProviderRegistry, upstream: any UpstreamClient, store: any AppTokenStore, lock: any RefreshLock,
        backoffStore: any RefreshBackoffStore, policy: RefreshCoordinator.Policy = RefreshCoordinator.Policy(),
        now: @escaping @Sendable () -> Date, providerCalls: (any ProviderCallObserver)? = nil,
        onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) {
        self.registry = registry
        self.context = ExchangeContext(upstream: upstream, redirectURI: "", registry: registry, now: now, observer: providerCalls)
        self.store = store
        self.flight = SingleFlight(lock: lock, backoffStore: backoffStore, policy: policy, now: now)
        self.policy = policy
        self.now = now
        self.onEvent = onEvent
    }

    /// A usable app token of provider `name` for `scope` (space-separated; nil asks for the provider's configured scopes).
    ///
    /// Refuses with ``BrokerError/unknownProvider(_:)``, `badRequest` for a
    /// provider without the client credentials grant or a malformed scope,
    /// ``BrokerError/providerNotConfigured(_:missing:)``, a storage error when
    /// the store or lock cannot be reached, and the provider's error when a
    /// fetch failed (or backs off) and no unexpired token is cached.
    public nonisolated func token(provider name: String, scope: String?) async throws(BrokerError) -> AppToken {
        let (settings, scopes) = try resolve(provider: name, scope: scope)
        let key = AppToken.key(provider: settings.name, scope: AppTokenScope.text(scopes))
        let cached = try await read(key)
        if let cached, !isDue(cached, at: now()) { return cached }
        return try await flight.run(Fetch(service: self, key: key, settings: settings, scopes: scopes, seen: cached))
    }

    /// Whole seconds until the next fetch for `name` and `scope` may call the provider while it backs off, for `Retry-After`; nil when it does not.
    public nonisolated func retryAfter(provider name: String, scope: String?) async -> Int? {
        guard let (settings, scopes) = try? resolve(provider: name, scope: scope) else { return nil }
        let key = AppToken.key(provider: settings.name, scope: AppTokenScope.text(scopes))
        return await flight.retryAfterSeconds(Self.backoffKey(for: key))
    }

    /// The seconds before expiry from which a token of `provider` that lives `lifetime` seconds is fetched anew:
    /// the broker's margin, never more than half the lifetime, so a short-lived token is reused for half its life.
    public nonisolated func refreshMargin(provider: String, lifetime: TimeInterval) -> TimeInterval {
        min(policy.margin, max(0, lifetime) / 2)
    }

    /// Whether `token` should be fetched anew at `now`: within its refresh margin, or past the reuse of a token without a lifetime.
    public nonisolated func isDue(_ token: AppToken, at now: Date) -> Bool {
        guard let expiresAt = token.expiresAt else {
            return now >= token.issuedAt.addingTimeInterval(Self.unknownLifetimeReuse)
        }
        let margin = refreshMargin(provider: token.provider, lifetime: expiresAt.timeIntervalSince(token.issuedAt))
        return now >= expiresAt.addingTimeInterval(-margin)
    }

    /// The provider's client credentials settings and the normalized scope tokens asked for.
    nonisolated func resolve(provider name: String, scope: String?) throws(BrokerError) -> (ClientCredentialsSettings, [String]) {
        guard let provider = registry.provider(named: name) else { throw .unknownProvider(name) }
        guard provider.grants.contains(.clientCredentials) else {
            throw .badRequest(
                "Provider \"\(provider.name)\" has no client credentials grant; give it \"grant\": \"client_credentials\" in the providers file"
            )
        }
        let settings = try ClientCredentialsSettings(provider)
        let scopes = try AppTokenScope.tokens(scope ?? settings.scopes.joined(separator: " "))
        return (settings, scopes)
    }
}
