import Foundation
import Synchronization

/// Refreshes accounts' access tokens one at a time per account: in this process and, through the ``RefreshLock``, across replicas.
///
/// The single flight is a ``SingleFlight`` keyed by the account's lock key: 20
/// concurrent readers cause one provider call and all get its token; a replica
/// that cannot get the shared lock re-reads the repository until the holder's
/// result shows up or the lock frees, and never calls the provider meanwhile
/// (RFC 9700 §4.14.2: presenting a rotated-out refresh token looks like theft
/// and can revoke the whole grant). Transient failures put the account into an
/// exponential backoff, lengthened by the provider's `Retry-After`, that lives
/// in a ``RefreshBackoffStore`` shared with the other replicas: while it lasts
/// nobody calls the provider for that account (for at least ``Policy/cooldown``
/// after any failure), and readers of an expired token get the last try's error
/// at once. Failures without a success for ``Policy/giveUp`` make the account
/// `refresh_exhausted`, which only a forced refresh or a new sign-in tries again.
public actor RefreshCoordinator {
    /// Where accounts live; results are written with its atomic `update`.
    nonisolated let accounts: any AccountRepository
    /// The providers, for token endpoints and client credentials.
    nonisolated let registry: ProviderRegistry
    /// What the providers' exchanges need: the outbound client, the callback URL (the refresh grant does not send it), the clock.
    nonisolated let context: ExchangeContext
    /// One refresh per account at a time, here and across replicas, with the shared lock and backoff.
    nonisolated let flight: SingleFlight<Outcome>
    /// Margin, lock TTL, polling and backoff settings.
    public nonisolated let policy: Policy
    /// The largest margin any account can have: ``Policy/margin`` or a provider's larger `refresh_margin`.
    nonisolated let marginCeiling: TimeInterval
    /// The injected clock that decides expiry, due dates and backoff.
    nonisolated let now: @Sendable () -> Date
    /// Told about every provider call's result, for logs and metrics.
    nonisolated let onEvent: @Sendable (Event) -> Void
    /// Told when an account needs re-authorization or will expire before its next try; nil records nothing.
    nonisolated let events: (any EventSink)?
    /// How many times a refreshed account's write found the store unavailable and was tried again.
    nonisolated let storeRetryCount = Atomic<Int>(0)

    /// When each account last had a token that lived no longer than its predecessor logged, so it is logged once an hour.
    var lastLifetimeWarning: [ExactKey: Date] = [:]
    /// Seconds between two such warnings for one account.
    static let lifetimeWarningInterval: TimeInterval = 3600
    /// The most accounts remembered there; past it the memory starts over, at worst one more warning each.
    static let lifetimeWarningsKept = 10_000
    /// Until when each provider asked not to be called by background refreshes (its `Retry-After`), by provider name.
    var providerPauses: [ExactKey: Date] = [:]

    /// Creates a coordinator; `onEvent` hears of every refresh call's result and must not block;
    /// `events` gets `account.reauthorization_required`, `account.refresh_failed`, `account.refresh_exhausted` and `account.recovered`.
    ///
    /// `backoffStore` defaults to one in this process (one broker on the file
    /// store); replicas pass the shared Redis one. `providerCalls` hears of
    /// every refresh and revocation call, for metrics.
    public init(
        accounts: any AccountRepository,
        registry: ProviderRegistry,
        upstream: any UpstreamClient,
        redirectURI: String,
        lock: any RefreshLock,
        backoffStore: (any RefreshBackoffStore)? = nil,
        policy: Policy = Policy(),
        now: @escaping @Sendable () -> Date,
        providerCalls: (any ProviderCallObserver)? = nil,
        onEvent: @escaping @Sendable (Event) -> Void = { _ in },
        events: (any EventSink)? = nil
    ) {
        self.accounts = accounts
        self.registry = registry
        self.context = ExchangeContext(
            upstream: upstream, redirectURI: redirectURI, registry: registry, now: now,
            observer: providerCalls)
        self.flight = SingleFlight(
            lock: lock, backoffStore: backoffStore ?? InProcessRefreshBackoffStore(now: now), policy: policy, now: now)
        self.policy = policy
        self.marginCeiling = registry.all.compactMap(\.refreshMargin).reduce(max(0, policy.margin), max)
        self.now = now
        self.onEvent = onEvent
        self.events = events
    }

    /// How many times a refreshed account's write found the store unavailable and was tried again (``store(_:in:replacing:)``).
    public nonisolated var storeRetries: Int { storeRetryCount.load(ordering: .relaxed) }

    /// Counts one more try of a refreshed account's write.
    nonisolated func onStoreRetry(_ id: AccountID) {
        storeRetryCount.add(1, ordering: .relaxed)
    }

    /// Whether `account` should be refreshed at `now`: active, refreshable, and its access token expiring
    /// (or its refresh token lapsing) within the margin (``RefreshTiming``).
    ///
    /// A token further from its end than the largest configured margin is not due whatever its provider, so
    /// most reads decide without looking the provider up.
    public nonisolated func isDue(_ account: Account, at now: Date) -> Bool {
        guard account.status == .active else { return false }
        let horizon = now.addingTimeInterval(marginCeiling)
        guard account.expiresAt.map({ $0 <= horizon }) == true || account.refreshTokenExpiresAt.map({ $0 <= horizon }) == true
        else { return false }
        return RefreshTiming.isDue(account, configured: margin(for: account.provider), at: now) && refreshExchange(for: account) != nil
    }

    /// ``isDue(_:at:)`` for an account as a store holds it: decided from its two expiries when neither is within
    /// the largest margin (most reads), else from the whole account.
    public nonisolated func isDue(_ held: HeldAccount, at now: Date) -> Bool {
        guard held.status == .active else { return false }
        let horizon = now.addingTimeInterval(marginCeiling)
        guard held.expiresAt.map({ $0 <= horizon }) == true || held.refreshTokenExpiresAt.map({ $0 <= horizon }) == true
        else { return false }
        return isDue(held.account, at: now)
    }

    /// The configured margin of `provider`'s accounts: its `refresh_margin`, else ``Policy/margin``.
    nonisolated func margin(for provider: String) -> TimeInterval {
        registry.provider(named: provider)?.refreshMargin ?? policy.margin
    }

    /// The exchange that can refresh `account`: it has a refresh token, its provider is configured, and the provider's exchange refreshes.
    nonisolated func refreshExchange(for account: Account) -> (any ProviderExchange)? {
        // The account's own settings fill its provider's URLs (`https://{subdomain}.example.com/oauth/token`).
        guard account.refreshToken != nil, let named = registry.provider(named: account.provider),
            let provider = try? named.applyingSettings(account.settings).0, let exchange = try? context.exchange(for: provider)
        else { return nil }
        return exchange.capabilities.contains(.refresh) ? exchange : nil
    }

    /// Refreshes `account` (as the caller read it) unless that is no longer needed; joins the refresh already running for it.
    ///
    /// With `respectingBackoff`, an account whose last try failed transiently
    /// is left alone until its backoff ends: ``Outcome/backingOff(_:lastError:until:)``
    /// carries that try's error, and no provider is called. The backoff is
    /// checked before the cross-replica lock and again once it is held, since
    /// the replica that held it may have just failed. Throws
    /// ``BrokerError/reauthorizationRequired`` when the refresh token is dead,
    /// ``BrokerError/notFound`` when the account was deleted, and a storage
    /// error when the store or the lock cannot be reached.
    ///
    /// With `force` the account is refreshed even when it is not due (an
    /// operator's request); a refresh already running for it is joined all the
    /// same, since its answer is as fresh as a new one would be.
    public nonisolated func refresh(_ account: Account, respectingBackoff: Bool, force: Bool = false) async throws(BrokerError) -> Outcome {
        try await flight.run(Refresh(coordinator: self, initial: account, respectingBackoff: respectingBackoff, force: force))
    }

    /// When the next try for `accountID` may start while it backs off after transient failures, or nil when it is not backing off.
    public nonisolated func retryNotBefore(accountID: AccountID) async -> Date? {
        await flight.activeBackoff(accountID.string)?.notBefore
    }
}
