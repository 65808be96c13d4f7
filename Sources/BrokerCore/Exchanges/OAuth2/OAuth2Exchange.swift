import BrokerCrypto
import Foundation

/// The OAuth 2.0 authorization code grant (RFC 6749 §4.1) for one provider: PKCE where it supports it, refresh, and revocation where it has an endpoint.
struct OAuth2Exchange: ProviderExchange {
    /// The provider's settings (`kind: oauth2`).
    let settings: OAuth2Settings
    /// The broker around the exchange.
    let context: ExchangeContext

    /// The client that speaks to the provider.
    var client: OAuth2Client {
        OAuth2Client(settings: settings, redirectURI: context.redirectURI, call: context.call)
    }

    /// Refresh always; revocation when the provider names a revoke endpoint; PKCE when configured.
    var capabilities: ExchangeCapabilities {
        var capabilities: ExchangeCapabilities = [.refresh]
        if settings.revocation != nil { capabilities.insert(.revoke) }
        if settings.pkce { capabilities.insert(.pkce) }
        return capabilities
    }

    /// A PKCE verifier when the provider uses PKCE, and the authorize URL carrying the state and its S256 challenge.
    func begin(state: String, binding: String) async throws(BrokerError) -> ExchangeStart {
        let verifier = settings.pkce ? PKCE.makeVerifier() : nil
        let url = client.authorizeURL(state: state, codeChallenge: verifier.map(PKCE.challenge(for:)))
        return ExchangeStart(authorizeURL: url, codeVerifier: verifier.map(Secret.init))
    }

    /// Checks the query, exchanges the code, names the user and fetches the provider's ``ResourceLookup``s.
    ///
    /// Order: state echoed in the query → issuer (`iss`) → provider error in
    /// the query → code → exchange → user → lookups; a failed lookup fails the connection.
    func complete(callback query: [String: String], flow: PendingFlow) async throws(BrokerError) -> ExchangeCompletion {
        let code = try checkCallback(query, flow: flow)
        let client = self.client
        let grant = try await client.exchange(code: code, codeVerifier: flow.codeVerifier?.value)
        return try await completion(of: grant)
    }

    /// The tokens of `grant` with the user they belong to and the provider's ``ResourceLookup``s: what a code exchange
    /// and a device sign-in share once the token endpoint answered.
    func completion(of grant: TokenGrant) async throws(BrokerError) -> ExchangeCompletion {
        var grant = grant
        let client = self.client
        grant.expiresIn = grant.expiresIn ?? settings.defaultExpiresIn
        if let uid = grant.uid {
            try ProviderUserID.check(uid, step: ProviderStep.tokenExchange.rawValue)
            try await client.lookUpResources(into: &grant)
            return ExchangeCompletion(grant: grant, uid: uid, screenName: grant.screenName)
        }
        if settings.userURL == nil, let fields = settings.tokenAnswer.userIDFields, !fields.isEmpty {
            // The provider names its users only in the token answer (Slack, Notion, Strava), and this one did not.
            throw .upstreamError(
                step: ProviderStep.tokenExchange.rawValue,
                reason: "the token response has no \(fields.joined(separator: " and "))")
        }
        let user = try await client.fetchUser(accessToken: grant.accessToken)
        try await client.lookUpResources(into: &grant)
        return ExchangeCompletion(grant: grant, uid: user.uid, screenName: grant.screenName ?? user.screenName)
    }

    /// The code of a callback for `flow`, after the checks that need no provider call: state echoed → issuer (`iss`) → no error → a code.
    func checkCallback(_ query: [String: String], flow: PendingFlow) throws(BrokerError) -> String {
        // RFC 6749 §4.1.2 and §10.12: the provider echoes the state in the redirect. A flow found only
        // through the flow cookie would let a planted `/callback?code=…` without state ride this
        // browser's flow (login CSRF where there is no PKCE); the echoed state must be the flow's.
        guard let echoed = query["state"], ConstantTime.equals(echoed, flow.state) else { throw .invalidState }
        try Self.checkIssuer(query["iss"], provider: settings, among: context.registry)
        // RFC 6749 §4.1.2.1: an `error` parameter means no code was issued; nothing is exchanged.
        if query["error"] != nil { throw .accessDenied }
        guard let code = query["code"], !code.isEmpty else { throw .badRequest("The callback has neither a code nor an error") }
        return code
    }

    /// The user of an imported token, from the user endpoint; a provider that names users only in its token answer
    /// (no `user_url`) cannot say, and the import must give the uid.
    func importedUser(accessToken: Secret) async throws(BrokerError) -> (uid: String, screenName: String?) {
        guard settings.userURL != nil else {
            throw .badRequest("This provider names its users only when they sign in; give uid")
        }
        return try await client.fetchUser(accessToken: accessToken)
    }

    /// The refresh grant, with the provider's `Retry-After` on failure.
    ///
    /// Where refresh tokens rotate, an answer without a new one leaves the
    /// account without any: the presented one is spent (RFC 9700 §4.14.2), and
    /// keeping it would only earn an `invalid_grant` at the next refresh.
    func refresh(refreshToken: Secret) async throws(RefreshFailure) -> TokenGrant {
        var grant = try await client.attemptRefresh(refreshToken: refreshToken)
        // An answer without `expires_in` gets the provider's configured lifetime; without one the token has no expiry.
        grant.expiresIn = grant.expiresIn ?? settings.defaultExpiresIn
        if settings.refreshTokenRotates, grant.refreshToken == nil { grant.presentedRefreshTokenSpent = true }
        grant.extrasKeptAcrossRefresh = settings.resourceLookups.map(\.name)
        return grant
    }

    /// Revokes at the revoke endpoint, with client credentials when the endpoint takes them.
    func revoke(_ account: Account) async throws(BrokerError) {
        try await client.revoke(account: account)
    }

    /// Refuses a callback whose `iss` names another authorization server than `provider`, before any provider call.
    ///
    /// RFC 9207 §2.4 and RFC 9700 §4.4 (mix-up): `iss` must equal the provider's
    /// configured issuer by simple string comparison (RFC 3986 §6.2.1); a provider
    /// that always sends `iss` must have sent it. Without a configured issuer, an
    /// `iss` is refused only when it is another configured provider's issuer.
    static func checkIssuer(_ iss: String?, provider: OAuth2Settings, among registry: ProviderRegistry) throws(BrokerError) {
        guard let expected = provider.issuer, !expected.isEmpty else {
            if let iss,
                registry.all.contains(where: { !ExactKey.same($0.name, provider.name) && $0.issuer.map { ExactKey.same($0, iss) } == true })
            {
                throw .badRequest("The callback's iss names another provider than the one this authorization was started with")
            }
            return
        }
        guard let iss else {
            guard !provider.requiresIssuerParameter else {
                throw .badRequest("The callback lacks the iss parameter this provider always sends (RFC 9207)")
            }
            return
        }
        guard ExactKey.same(iss, expected) else {
            throw .badRequest("The callback's iss does not name the provider this authorization was started with (RFC 9207)")
        }
    }
}
