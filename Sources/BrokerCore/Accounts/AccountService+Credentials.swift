import BrokerCrypto
import Foundation

extension AccountService {
    /// Stores an entered credential (`api_key`, `basic`, `bearer`) as account `provider:uid`, replacing the
    /// credential of an account already there, in the same durable step as its `account.connected` (or
    /// `account.reconnected`) event.
    ///
    /// The values become the account's `access_token` (``CredentialValues/stored``), sealed like any token; the
    /// `token_type` names the kind; there is no refresh token and no expiry. The end user and tags replace the earlier
    /// record's when given, else are kept. `settings` are the provider's per-account settings, already checked
    /// (``ProviderConfiguration/applyingSettings(_:)``); the metadata is kept.
    public func storeEntered(
        _ values: CredentialValues, provider: ProviderConfiguration, uid: String, endUser: EndUser?, tags: [String: String]?,
        settings: [String: String] = [:]
    ) async throws(BrokerError) -> (account: Account, existed: Bool) {
        let at = now()
        let id = AccountID(provider: provider.name, uid: uid)
        let existed = TransformWitness(false)
        let kind = provider.kind.rawValue
        let transform: @Sendable (Account?) throws(StoreError) -> Account? = { existing in
            existed.value = existing != nil
            return Account(
                provider: provider.name, uid: uid, accessToken: values.stored, tokenType: kind,
                createdAt: existing?.createdAt ?? at, updatedAt: at, status: .active, issuedAt: at,
                endUser: endUser ?? existing?.endUser, tags: tags ?? existing?.tags ?? [:], settings: settings,
                metadata: existing?.metadata)
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

extension AccountService {
    /// Records the provider's verdict on account `id`'s entered credential: a refusal makes an `active` account
    /// `invalid` (with `account.invalid`), a pass makes an `invalid` one `active` (with `account.recovered`), in the
    /// same durable step as the event; any other status, or a verdict that changes nothing, writes nothing.
    /// Returns the account as stored afterwards; nil when it is not stored.
    @discardableResult
    public func recordVerification(id: AccountID, valid: Bool) async throws(BrokerError) -> Account? {
        /// The status the verdict gives an account in `status`, or nil when it changes nothing.
        @Sendable func next(_ status: AccountStatus) -> AccountStatus? {
            switch (status, valid) {
            case (.active, false): .invalid
            case (.invalid, true): .active
            default: nil
            }
        }
        let at = now()
        let transform: @Sendable (Account?) throws(StoreError) -> Account? = { existing in
            guard var account = existing else { return nil }
            guard let status = next(account.status) else { return account }
            account.status = status
            account.updatedAt = at
            return account
        }
        let event: AccountChangeEvent = { before, after in
            guard let before, let after, before.status != after.status else { return nil }
            switch after.status {
            case .invalid: return (.accountInvalid, BrokerEventData(account: after))
            case .active: return (.accountRecovered, BrokerEventData(account: after))
            case .reauthorizationRequired, .refreshExhausted: return nil
            }
        }
        do {
            // Most verdicts change nothing: read first, and write only a change.
            guard let current = try await accounts.get(id: id) else { return nil }
            guard next(current.status) != nil else { return current }
            if let events {
                return try await accounts.update(id: id, reporting: event, to: events, transform)
            }
            return try await accounts.update(id: id, transform)
        } catch {
            throw BrokerError(error)
        }
    }
}

extension CredentialValues {
    /// The uid of an account given none and named by no verification answer: a `basic` account's user name (unless
    /// the provider fixes it, as Mailgun's `api`: then every account would share it, or marks it secret, as
    /// Freshdesk's API key), else `key-` and 24 hex digits
    /// of SHA-256 over the provider and the values.
    ///
    /// The same credential at the same provider always gives the same uid, so entering it twice updates one account.
    /// A digest of a random API key (well over 80 bits of entropy in every provider's format) tells nothing of the
    /// key; a user name is no secret and is what people recognise.
    public func derivedUID(provider: ProviderConfiguration) -> String {
        // A fixed user name (Mailgun's `api`) tells accounts apart no better than a constant; a secret one
        // (Freshdesk's API key) must not become a uid, which `/accounts` lists.
        let userField = provider.credentials?.fields.first { $0.name == "username" }
        let plainUser = userField.map { !$0.isFixed && !$0.isSecret } ?? true
        if provider.kind == .basic, plainUser, let user = self["username"], ProviderUserID.problem(with: user) == nil { return user }
        var input = Array("token-broker entered credential\u{0}".utf8) + Array(provider.name.utf8) + [0]
        input += Array(stored.value.utf8)
        return "key-" + String(Hex.encode(SHA256.hash(input)).prefix(24))
    }
}
