import BrokerCrypto
import Foundation

/// A remote MCP server's sign-in (MCP authorization): OAuth 2.0's authorization code grant with PKCE S256 at the
/// discovered authorization server, as the discovered or registered client, with `resource=<server>` on the
/// authorize request and every token request (RFC 8707 §2).
///
/// Until discovery has loaded, a sign-in refuses with ``BrokerError/providerUnavailable(_:reason:)`` (503) and a
/// refresh fails as a transient error, as for OpenID providers. An MCP server names no user: the account's uid is
/// the token answer's `uid` or `user_id` when it has one, the renewed account's on a reconnect or step-up, and else
/// a fresh random id, so each sign-in adds an account.
struct MCPExchange: ProviderExchange {
    /// The provider's settings (`kind: mcp`).
    let settings: MCPSettings
    /// The broker around the exchange.
    let context: ExchangeContext

    /// The OAuth 2.0 exchange on the discovered endpoints and client, or why there is none yet.
    func oauth2() throws(BrokerError) -> OAuth2Exchange {
        let authorization = try context.registry.mcp.metadata(for: settings.provider.name)
        let configuration = authorization.oauth2Configuration(of: settings.provider)
        return OAuth2Exchange(settings: try OAuth2Settings(configuration), context: context)
    }

    /// Refresh always (it fails transiently while discovery has not loaded), PKCE always, revocation as discovered.
    var capabilities: ExchangeCapabilities {
        guard let loaded = try? oauth2() else { return [.refresh, .pkce] }
        return loaded.capabilities.union(.pkce)
    }

    /// The OAuth 2.0 start: PKCE S256 and `resource` on the authorize URL.
    func begin(state: String, binding: String) async throws(BrokerError) -> ExchangeStart {
        try await oauth2().begin(state: state, binding: binding)
    }

    /// Checks the callback, exchanges the code (with `resource`) and names the account.
    func complete(callback query: [String: String], flow: PendingFlow) async throws(BrokerError) -> ExchangeCompletion {
        let exchange = try oauth2()
        let code = try exchange.checkCallback(query, flow: flow)
        var grant = try await exchange.client.exchange(code: code, codeVerifier: flow.codeVerifier?.value)
        grant.expiresIn = grant.expiresIn ?? settings.provider.defaultExpiresIn
        let uid = try Self.uid(of: grant, renewing: flow.connect?.reconnectAccountID ?? flow.stepUpAccountID)
        return ExchangeCompletion(grant: grant, uid: uid, screenName: grant.screenName)
    }

    /// The account's uid: the answer's user when it names one, else the renewed account's, else a fresh random id.
    static func uid(of grant: TokenGrant, renewing: String?) throws(BrokerError) -> String {
        if let uid = grant.uid {
            try ProviderUserID.check(uid, step: ProviderStep.tokenExchange.rawValue)
            return uid
        }
        if let renewing, let id = AccountID(renewing) { return id.uid }
        return Hex.encode(SecureRandom.bytes(16))
    }

    /// The refresh grant with `resource`; while discovery has not loaded, an upstream error the account backs off from.
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

    /// Revokes at the discovered `revocation_endpoint`, when there is one.
    func revoke(_ account: Account) async throws(BrokerError) {
        try await oauth2().revoke(account)
    }
}
