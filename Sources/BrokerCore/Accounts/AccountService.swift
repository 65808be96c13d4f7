import Foundation

/// Reads, lists and deletes stored accounts, deciding expiry with the injected clock and refreshing tokens before they expire.
public final class AccountService: Sendable {
    /// What a deletion did.
    public struct DeletionResult: Sendable {
        /// The account as it was before deletion.
        public var account: Account
        /// Whether the provider confirmed the revocation; nil when the provider has no revoke endpoint.
        public var revoked: Bool?
        /// Why revocation failed, for the log; never a token.
        public var revokeError: String?

        /// Creates a result.
        public init(account: Account, revoked: Bool?, revokeError: String?) {
            self.account = account
            self.revoked = revoked
            self.revokeError = revokeError
        }
    }

    /// Where accounts live.
    let accounts: any AccountRepository
    /// The same repository when it can answer from memory without suspending (the file store).
    public let immediateReader: (any ImmediateAccountReading)?
    /// The providers, for revocation endpoints.
    let registry: ProviderRegistry
    /// The injected clock that decides expiry.
    let now: @Sendable () -> Date
    /// Refreshes tokens on read and for the background refresher, one refresh per account at a time.
    public let refresher: RefreshCoordinator
    /// Told of every deletion, and (through the refresher) of refresh failures that matter to the back end; nil records nothing.
    let events: (any EventSink)?

    /// Creates the service; `redirectURI` is the broker's fixed callback URL.
    ///
    /// `refreshLock` and `refreshBackoff` default to in-process ones (one
    /// broker on the file store); replicas pass the shared Redis ones.
    /// `onRefresh` hears of every refresh call to a provider, for logs and metrics;
    /// `providerCalls` of every refresh and revocation call's duration and outcome.
    /// `events` hears of deletions and of refreshes that need the back end's attention.
    public init(
        accounts: any AccountRepository,
        registry: ProviderRegistry,
        upstream: any UpstreamClient,
        redirectURI: String,
        now: @escaping @Sendable () -> Date,
        refreshPolicy: RefreshCoordinator.Policy = RefreshCoordinator.Policy(),
        refreshLock: (any RefreshLock)? = nil,
        refreshBackoff: (any RefreshBackoffStore)? = nil,
        providerCalls: (any ProviderCallObserver)? = nil,
        onRefresh: @escaping @Sendable (RefreshCoordinator.Event) -> Void = { _ in },
        events: (any EventSink)? = nil
    ) {
        self.accounts = accounts
        self.events = events
        self.immediateReader = accounts.immediateReading
        self.registry = registry
        self.now = now
        refresher = RefreshCoordinator(
            accounts: accounts, registry: registry, upstream: upstream, redirectURI: redirectURI,
            lock: refreshLock ?? InProcessRefreshLock(now: now), backoffStore: refreshBackoff,
            policy: refreshPolicy, now: now, providerCalls: providerCalls, onEvent: onRefresh, events: events)
    }

    /// The usable account with `id`, refreshed first when it expires within the margin.
    ///
    /// Refuses with notFound when absent, reauthorizationRequired when its
    /// status says so (or the refresh token was just rejected), refreshExhausted
    /// when the broker gave up refreshing it (or just did), expired after its
    /// expiry when it cannot be refreshed, and the upstream error when a refresh
    /// failed and the old token has expired too; while the account backs off
    /// after such a failure, a read of its expired token gets that failure's
    /// error at once, without calling the provider. An expired account is treated
    /// as absent but stays stored until a new authorization replaces it.
    public func account(id: AccountID) async throws(BrokerError) -> Account {
        let found: Account?
        do { found = try await accounts.get(id: id) } catch { throw BrokerError(error) }
        guard var account = found else { throw .notFound }
        switch account.status {
        case .reauthorizationRequired: throw .reauthorizationRequired
        // Not tried again on a read: only a forced refresh or a new sign-in does.
        case .refreshExhausted: throw .refreshExhausted
        case .invalid: throw .accountInvalid
        case .active: break
        }
        account = try await refreshedIfDue(account)
        if account.isExpired(at: now()) { throw .expired }
        return account
    }

    /// The account with `id` as stored, without a refresh or any check of its status; nil when absent.
    public func stored(id: AccountID) async throws(BrokerError) -> Account? {
        do { return try await accounts.get(id: id) } catch { throw BrokerError(error) }
    }

    /// Every stored account counted by status now, or nil when the repository cannot count them cheaply (see ``AccountStatusCounting``).
    public func statusCounts() async throws(BrokerError) -> AccountStatusCounts? {
        guard let counter = accounts.statusCounting else { return nil }
        let at = now()
        do { return try await counter.statusCounts(at: at) } catch { throw BrokerError(error) }
    }

    /// Every stored account, or those of `provider`, sorted by id; expired ones included.
    public func list(provider: String?) async throws(BrokerError) -> [Account] {
        do { return try await accounts.list(provider: provider) } catch { throw BrokerError(error) }
    }

    /// The stored accounts among `ids` (a browser session's), those of `provider` only when given, sorted by id;
    /// ids no longer stored are skipped and nothing is refreshed.
    public func list(ids: [AccountID], provider: String?) async throws(BrokerError) -> [Account] {
        var found: [Account] = []
        for id in ids {
            let account: Account?
            do { account = try await accounts.get(id: id) } catch { throw BrokerError(error) }
            guard let account, provider.map({ ExactKey.same($0, account.provider) }) ?? true,
                !found.contains(where: { ExactKey.same($0.id, account.id) })
            else { continue }
            found.append(account)
        }
        return found.sorted { ExactKey.precedes($0.id, $1.id) }
    }

    /// Revokes the account at its provider when it has a revoke endpoint (best effort), then deletes it locally, always.
    ///
    /// `account.deleted` is written in the same durable step as the removal,
    /// with `revoked` false when the provider offers no revocation or refused
    /// it; when either cannot be written this fails with
    /// ``BrokerError/storageUnavailable(_:)``. Only the call that removed the
    /// record reports it.
    public func delete(id: AccountID) async throws(BrokerError) -> DeletionResult {
        let found: Account?
        do { found = try await accounts.get(id: id) } catch { throw BrokerError(error) }
        guard let account = found else { throw .notFound }
        var result = DeletionResult(account: account, revoked: nil, revokeError: nil)
        if let named = registry.provider(named: account.provider) {
            // The account's settings fill the revocation URL; a stored value the provider now refuses revokes nothing.
            switch Result(catching: { () throws(BrokerError) in try named.applyingSettings(account.settings).0 }) {
            case .success(let provider): (result.revoked, result.revokeError) = await revoke(account, at: provider)
            case .failure(let error): (result.revoked, result.revokeError) = (false, error.message)
            }
        }
        do {
            if let events {
                let revoked = result.revoked ?? false
                _ = try await accounts.update(
                    id: id,
                    reporting: { before, after in
                        guard let before, after == nil else { return nil }
                        var data = BrokerEventData(account: before, status: "deleted")
                        data.revoked = revoked
                        return (.accountDeleted, data)
                    }, to: events
                ) { _ in nil }
            } else {
                _ = try await accounts.delete(id: id)
            }
        } catch {
            throw BrokerError(error)
        }
        return result
    }

    /// Whether ``delete(id:)`` of an account of `provider` asks the provider to revoke it (it has a revocation the broker can call).
    public func revokes(provider name: String) -> Bool {
        guard let provider = registry.provider(named: name) else { return false }
        return ((try? refresher.context.revocation(for: provider)) ?? nil) != nil
    }

    /// Revokes at `provider`: nil when it has no revocation, else whether it worked and why not.
    private func revoke(_ account: Account, at provider: ProviderConfiguration) async -> (Bool?, String?) {
        do throws(BrokerError) {
            guard let revocation = try refresher.context.revocation(for: provider) else { return (nil, nil) }
            try await revocation(account)
            return (true, nil)
        } catch {
            return (false, error.message)
        }
    }
}
