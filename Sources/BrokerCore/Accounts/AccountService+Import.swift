import Foundation

/// OAuth tokens brought from another system, as `POST /accounts` takes them.
public struct TokenImport: Sendable {
    /// The provider's name.
    public var provider: String
    /// The access token.
    public var accessToken: Secret
    /// The refresh token, when there is one; the broker refreshes once with it before storing.
    public var refreshToken: Secret?
    /// When the access token expires, as the other system knew it; nil for none.
    public var expiresAt: Date?
    /// The granted scope.
    public var scope: String?
    /// The user's id at the provider; nil asks the provider's user endpoint.
    public var uid: String?
    /// The back end's user the account belongs to.
    public var endUser: EndUser?
    /// Labels; nil keeps an existing account's.
    public var tags: [String: String]?
    /// Check everything, call the provider, store nothing.
    public var dryRun: Bool
    /// The provider's per-account settings (``AccountSetting``), checked before any call and kept with the account.
    public var settings: [String: String] = [:]

    /// Creates an import.
    public init(
        provider: String, accessToken: Secret, refreshToken: Secret? = nil, expiresAt: Date? = nil, scope: String? = nil,
        uid: String? = nil, endUser: EndUser? = nil, tags: [String: String]? = nil, dryRun: Bool = false
    ) {
        self.provider = provider
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.scope = scope
        self.uid = uid
        self.endUser = endUser
        self.tags = tags
        self.dryRun = dryRun
    }
}

extension TokenImport {
    /// The same import with `settings`.
    public func with(settings: [String: String]) -> TokenImport {
        var copy = self
        copy.settings = settings
        return copy
    }
}

extension AccountService {
    /// Imports OAuth tokens: with a refresh token, refreshes once first, so a dead grant is refused before anything is
    /// stored (``BrokerError/credentialInvalid(provider:status:)``); names the user at the provider's user endpoint
    /// unless the import gives the uid; then stores the account (`account.connected` or `account.reconnected`), or,
    /// for a dry run, only answers what it would store.
    public func importTokens(_ i: TokenImport) async throws(BrokerError) -> (account: Account, existed: Bool) {
        guard let named = registry.provider(named: i.provider) else { throw .unknownProvider(i.provider) }
        // The account's settings fill the token and user URLs before any call; an unfit one is refused here.
        let (provider, settings) = try named.applyingSettings(i.settings)
        let exchange = try refresher.context.exchange(for: provider)
        let at = now()
        var accessToken = i.accessToken
        var refreshToken = i.refreshToken
        var expiresAt = i.expiresAt
        var scope = i.scope
        var refreshed = false
        if let presented = i.refreshToken {
            guard exchange.capabilities.contains(.refresh) else {
                throw .badRequest("This provider cannot refresh; leave out refresh_token")
            }
            let grant: TokenGrant
            do {
                grant = try await exchange.refresh(refreshToken: presented)
            } catch {
                // RFC 6749 §5.2: a dead grant is `invalid_grant`, HTTP 400; anything else is the provider failing.
                if case .reauthorizationRequired = error.error { throw .credentialInvalid(provider: provider.name, status: 400) }
                throw error.error
            }
            accessToken = grant.accessToken
            if let next = grant.refreshToken { refreshToken = next } else if grant.presentedRefreshTokenSpent { refreshToken = nil }
            expiresAt = Account.expiry(issuedAt: at, expiresIn: grant.expiresIn)
            scope = grant.scope ?? scope
            refreshed = true
        }
        let uid: String
        if let given = i.uid {
            uid = given
        } else {
            uid = try await exchange.importedUser(accessToken: accessToken).uid
        }
        let id = AccountID(provider: provider.name, uid: uid)
        let build: @Sendable (Account?) -> Account = { [accessToken, refreshToken, expiresAt, scope, refreshed] existing in
            Account(
                provider: provider.name, uid: uid, accessToken: accessToken, tokenType: "bearer", scope: scope,
                refreshToken: refreshToken, expiresAt: expiresAt, createdAt: existing?.createdAt ?? at, updatedAt: at,
                refreshedAt: refreshed ? at : nil, status: .active, issuedAt: at, endUser: i.endUser ?? existing?.endUser,
                tags: i.tags ?? existing?.tags ?? [:], settings: settings, metadata: existing?.metadata)
        }
        if i.dryRun {
            let existing = try await stored(id: id)
            return (build(existing), existing != nil)
        }
        let existed = TransformWitness(false)
        let transform: @Sendable (Account?) throws(StoreError) -> Account? = { existing in
            existed.value = existing != nil
            return build(existing)
        }
        let stored: Account?
        do {
            if let events {
                stored = try await accounts.update(id: id, reporting: AuthorizationService.connectionEvent, to: events, transform)
            } else {
                stored = try await accounts.update(id: id, transform)
            }
        } catch {
            throw BrokerError(error)
        }
        guard let stored else { throw .storageUnavailable("update of account \(id) stored nothing") }
        return (stored, existed.value)
    }
}
