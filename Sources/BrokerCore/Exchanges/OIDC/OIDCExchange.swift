import BrokerCrypto
import Foundation

/// OpenID Connect's authorization code flow (OIDC Core §3.1) for one provider: OAuth 2.0 on the endpoints of the
/// issuer's discovery document, with a `nonce` and the ID token naming the user.
///
/// Until the document has loaded, starting or completing a sign-in refuses
/// with ``BrokerError/providerUnavailable(_:reason:)`` (503), and a refresh
/// fails as a transient error, so accounts back off rather than need re-authorization.
struct OIDCExchange: ProviderExchange {
    /// The provider's settings (`kind: oidc`).
    let settings: OIDCSettings
    /// The broker around the exchange.
    let context: ExchangeContext

    /// The OAuth 2.0 exchange on the loaded document's endpoints, or why there is none yet.
    func oauth2() throws(BrokerError) -> OAuth2Exchange {
        let metadata = try context.registry.discovery.metadata(for: settings.provider.name)
        let configuration = try settings.oauth2Configuration(with: metadata)
        return OAuth2Exchange(settings: try OAuth2Settings(configuration), context: context)
    }

    /// Refresh always (it fails transiently while the document is missing); revocation and PKCE as the loaded document allows.
    var capabilities: ExchangeCapabilities {
        guard let loaded = try? oauth2() else { return [.refresh] }
        return loaded.capabilities
    }

    /// The OAuth 2.0 start plus a fresh `nonce` (OIDC Core §3.1.2.1), kept with the flow to compare with the ID token's.
    func begin(state: String, binding: String) async throws(BrokerError) -> ExchangeStart {
        let exchange = try oauth2()
        var start = try await exchange.begin(state: state, binding: binding)
        let nonce = SecureRandom.token(byteCount: 32)
        start.authorizeURL = FormEncoding.url(start.authorizeURL, adding: [("nonce", nonce)])
        start.nonce = Secret(nonce)
        return start
    }

    /// Checks the query as OAuth 2.0 does, exchanges the code, and names the user by the checked ID token's `sub`.
    ///
    /// A flow of the previous version carries no nonce; its ID token's `nonce`
    /// is then not compared (OIDC Core §3.1.3.7 step 11 asks it only of a sent nonce).
    /// The display name is the ID token's, else the userinfo answer's when its
    /// `sub` is the same (OIDC Core §5.3.2); a userinfo failure leaves it unnamed. A preset that names its
    /// accounts by its user endpoint (``OIDCOptions/userFromUserEndpoint``) asks it after the ID token's checks,
    /// and a failure there fails the connection.
    func complete(callback query: [String: String], flow: PendingFlow) async throws(BrokerError) -> ExchangeCompletion {
        let exchange = try oauth2()
        let code = try exchange.checkCallback(query, flow: flow)
        let client = exchange.client
        let step = ProviderStep.tokenExchange.rawValue
        let issuer = settings.issuer
        let clientID = settings.clientID
        let nonce = flow.nonce?.value
        let aliases = settings.provider.oidcOptions.idTokenIssuerAliases
        let now = context.now()
        let exchanged = try await client.exchange(code: code, codeVerifier: flow.codeVerifier?.value) {
            fields throws(BrokerError) in
            try OIDCIDToken.verify(
                fields["id_token"], issuer: issuer, clientID: clientID, nonce: nonce, now: now, step: step, issuerAliases: aliases)
        }
        var grant = exchanged.grant
        let idToken = exchanged.extra
        if settings.provider.oidcOptions.userFromUserEndpoint {
            // The ID token was checked; the account keeps the id the preset always named it by (its user endpoint's).
            let user = try await client.fetchUser(accessToken: grant.accessToken)
            try await client.lookUpResources(into: &grant)
            return ExchangeCompletion(grant: grant, uid: user.uid, screenName: user.screenName ?? idToken.displayName)
        }
        var name = idToken.displayName
        if name == nil, client.settings.userURL != nil,
            let user = try? await client.fetchUser(accessToken: grant.accessToken), ExactKey.same(user.uid, idToken.subject)
        {
            name = user.screenName
        }
        try await client.lookUpResources(into: &grant)
        return ExchangeCompletion(grant: grant, uid: idToken.subject, screenName: name)
    }

    /// The OAuth 2.0 refresh grant at the document's token endpoint; while the document is missing, an upstream
    /// error of the refresh step, which the account backs off from like any transient provider failure.
    func refresh(refreshToken: Secret) async throws(RefreshFailure) -> TokenGrant {
        let exchange: OAuth2Exchange
        do {
            exchange = try oauth2()
        } catch {
            let reason = if case .providerUnavailable(_, let why) = error { why } else { error.message }
            throw RefreshFailure(.upstreamError(step: ProviderStep.tokenRefresh.rawValue, reason: reason))
        }
        return try await exchange.refresh(refreshToken: refreshToken)
    }

    /// Revokes at the document's `revocation_endpoint` (or the configured `revoke_url`).
    func revoke(_ account: Account) async throws(BrokerError) {
        try await oauth2().revoke(account)
    }

    /// The device grant of the discovered endpoints (RFC 8628); the ID token is not checked, as the tokens come
    /// straight from the token endpoint over TLS (OIDC Core §3.1.3.7), and the user is named as the OAuth 2.0 exchange names them.
    func authorizeDevice(scopes: [String]?) async throws(BrokerError) -> DeviceAuthorization {
        try await oauth2().authorizeDevice(scopes: scopes)
    }

    /// Polls through the discovered token endpoint; see ``authorizeDevice(scopes:)``.
    func pollDevice(deviceCode: Secret) async throws(BrokerError) -> DevicePoll {
        try await oauth2().pollDevice(deviceCode: deviceCode)
    }

    /// How to revoke `provider`'s accounts: at the loaded document's revocation endpoint, nil when it names none,
    /// and a revocation that refuses with the reason while the document is missing.
    static func revocation(for provider: ProviderConfiguration, in context: ExchangeContext) throws(BrokerError) -> ExchangeRegistry
        .Revocation?
    {
        let settings = try OIDCSettings(provider)
        let metadata: OIDCProviderMetadata
        do {
            metadata = try context.registry.discovery.metadata(for: provider.name)
        } catch {
            return { _ throws(BrokerError) in throw error }
        }
        let configuration = try settings.oauth2Configuration(with: metadata)
        guard let revocation = try OAuth2Revocation.of(configuration) else { return nil }
        let call = context.call
        return { account throws(BrokerError) in try await revocation.revoke(account, through: call) }
    }
}
