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
    let immediateReader: (any ImmediateAccountReading)?
    /// The providers, for revocation endpoints.
    let registry: ProviderRegistry
    /// The injected clock that decides expiry.
    let now: @Sendable () -> Date
    /// Refreshes tokens on read and for the background refresher, one refresh per account at a time.
    public let refresher: RefreshCoordinator

    /// Creates the service; `redirectURI` is the broker's fixed callback URL.
    ///
    /// `refreshLock` and `refreshBackoff` default to in-process ones (one
    /// broker on the file store); replicas pass the shared Redis ones.
    /// `onRefresh` hears of every refresh call to a provider, for logs and metrics.
    public init(
        accounts: any AccountRepository,
        registry: ProviderRegistry,
        upstream: any UpstreamClient,
        redirectURI: String,
        now: @escaping @Sendable () -> Date,
        refreshPolicy: RefreshCoordinator.Policy = RefreshCoordinator.Policy(),
        refreshLock: (any RefreshLock)? = nil,
        refreshBackoff: (any RefreshBackoffStore)? = nil,
        onRefresh: @escaping @Sendable (RefreshCoordinator.Event) -> Void = { _ in }
    ) {
        self.accounts = accounts
        self.immediateReader = accounts as? any ImmediateAccountReading
        self.registry = registry
        self.now = now
        refresher = RefreshCoordinator(
            accounts: accounts, registry: registry, upstream: upstream, redirectURI: redirectURI,
            lock: refreshLock ?? InProcessRefreshLock(now: now), backoffStore: refreshBackoff,
            policy: refreshPolicy, now: now, onEvent: onRefresh)
    }

    /// The usable account with `id`, refreshed first when it expires within the margin.
    ///
    /// Refuses with notFound when absent, reauthorizationRequired when its
    /// status says so (or the refresh token was just rejected), expired after its
    /// expiry when it cannot be refreshed, and the upstream error when a refresh
    /// failed and the old token has expired too; while the account backs off
    /// after such a failure, a read of its expired token gets that failure's
    /// error at once, without calling the provider. An expired account is treated
    /// as absent but stays stored until a new authorization replaces it.
    public func account(id: String) async throws(BrokerError) -> Account {
        let found: Account? = try await BrokerError.fromStore { try await accounts.get(id: id) }
        guard var account = found else { throw .notFound }
        switch account.status {
        case .reauthorizationRequired: throw .reauthorizationRequired
        case .active: break
        }
        account = try await refreshedIfDue(account)
        if account.isExpired(at: now()) { throw .expired }
        return account
    }

    /// Every stored account, or those of `provider`, sorted by id; expired ones included.
    public func list(provider: String?) async throws(BrokerError) -> [Account] {
        return try await BrokerError.fromStore { try await accounts.list(provider: provider) }
    }

    /// The stored accounts among `ids` (a browser session's), those of `provider` only when given, sorted by id;
    /// ids no longer stored are skipped and nothing is refreshed.
    public func list(ids: [String], provider: String?) async throws(BrokerError) -> [Account] {
        var found: [Account] = []
        for id in ids {
            let account: Account? = try await BrokerError.fromStore { try await accounts.get(id: id) }
            guard let account, provider.map({ ExactKey.same($0, account.provider) }) ?? true,
                  !found.contains(where: { ExactKey.same($0.id, account.id) }) else { continue }
            found.append(account)
        }
        return found.sorted { ExactKey.precedes($0.id, $1.id) }
    }

    /// Revokes the account at its provider when it has a revoke endpoint (best effort), then deletes it locally, always.
    public func delete(id: String) async throws(BrokerError) -> DeletionResult {
        let found: Account? = try await BrokerError.fromStore { try await accounts.get(id: id) }
        guard let account = found else { throw .notFound }
        var result = DeletionResult(account: account, revoked: nil, revokeError: nil)
        if let provider = registry.provider(named: account.provider) {
            (result.revoked, result.revokeError) = await revoke(account, at: provider)
        }
        _ = try await BrokerError.fromStore { try await accounts.delete(id: id) }
        return result
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
