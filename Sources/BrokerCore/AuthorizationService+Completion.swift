import BrokerCrypto
import Foundation

extension AuthorizationService {
    /// Completes a flow from the callback's query items and stores the account.
    ///
    /// `state` is the query's state (or, for OAuth 1.0a, the one in the flow
    /// cookie); `bindingProof` is the flow cookie's nonce, nil without a cookie.
    /// Order: take the flow (single use) → missing or expired → binding → state
    /// echoed in the query (OAuth 2.0) → issuer (`iss`) → provider error in the
    /// query → code → exchange → user → store. Every refusal before
    /// the exchange makes no provider call.
    public func complete(state: String, bindingProof: String?, query: [String: String]) async throws(BrokerError) -> (account: Account, returnTo: String?) {
        let takenAt = now()
        let taken: PendingFlow?
        do {
            // RFC 9700 §4.2.4 / RFC 6749 §10.12: the state is consumed by this take, whatever follows.
            taken = try await flows.take(state: state, now: takenAt)
        } catch {
            throw BrokerError.storage(error)
        }
        guard let flow = taken, !flow.isExpired(at: takenAt) else { throw .invalidState }
        guard Self.bindingMatches(flow.binding, proof: bindingProof) else { throw .invalidState }
        let provider = try configuredProvider(named: flow.provider)
        switch provider.kind {
        case .oauth2:
            let account = try await completeOAuth2(flow, provider: provider, query: query)
            return (account, flow.returnTo)
        case .oauth1:
            let account = try await completeOAuth1(flow, provider: provider, query: query)
            return (account, flow.returnTo)
        case .tmdb:
            let account = try await completeTMDB(flow, provider: provider, query: query)
            return (account, flow.returnTo)
        }
    }

    /// Whether `proof` (the flow cookie's nonce) hashes to the flow's binding, compared in constant time.
    ///
    /// RFC 6749 §10.12: the state is bound to the user agent; a flow bound to
    /// ``apiBinding`` was started by a back end and needs no proof.
    static func bindingMatches(_ binding: String, proof: String?) -> Bool {
        if binding == apiBinding { return true }
        guard let proof, !proof.isEmpty else { return false }
        return ConstantTime.equals(Self.binding(forCookieNonce: proof), binding)
    }

    /// Checks the query, exchanges the code, names the user and stores the account.
    private func completeOAuth2(_ flow: PendingFlow, provider: ProviderConfiguration, query: [String: String]) async throws(BrokerError) -> Account {
        // RFC 6749 §4.1.2 and §10.12: the provider echoes the state in the redirect. A flow found only
        // through the flow cookie would let a planted `/callback?code=…` without state ride this
        // browser's flow (login CSRF where there is no PKCE); the echoed state must be the flow's.
        guard let echoed = query["state"], ConstantTime.equals(echoed, flow.state) else { throw .invalidState }
        try checkIssuer(query["iss"], provider: provider)
        // RFC 6749 §4.1.2.1: an `error` parameter means no code was issued; nothing is exchanged.
        if query["error"] != nil { throw .accessDenied }
        guard let code = query["code"], !code.isEmpty else { throw .badRequest("The callback has neither a code nor an error") }
        let client = OAuth2Client(provider: provider, redirectURI: redirectURI, upstream: upstream)
        let grant = try await client.exchange(code: code, codeVerifier: flow.codeVerifier?.value)
        var uid = grant.uid
        var screenName = grant.screenName
        if let uid {
            try ProviderUserID.check(uid, step: "token_exchange")
        } else {
            let user = try await client.fetchUser(accessToken: grant.accessToken)
            uid = user.uid
            screenName = screenName ?? user.screenName
        }
        return try await store(grant, provider: provider.name, uid: uid ?? "", screenName: screenName)
    }

    /// Refuses a callback whose `iss` names another authorization server than the flow's provider, before any provider call.
    ///
    /// RFC 9207 §2.4 and RFC 9700 §4.4 (mix-up): `iss` must equal the provider's
    /// configured issuer by simple string comparison (RFC 3986 §6.2.1); a provider
    /// that always sends `iss` must have sent it. Without a configured issuer, an
    /// `iss` is refused only when it is another configured provider's issuer.
    func checkIssuer(_ iss: String?, provider: ProviderConfiguration) throws(BrokerError) {
        guard let expected = provider.issuer, !expected.isEmpty else {
            if let iss, registry.all.contains(where: { !ExactKey.same($0.name, provider.name) && $0.issuer.map { ExactKey.same($0, iss) } == true }) {
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

    /// Writes the account: a new record, or the same id updated (createdAt kept, updatedAt now, status active).
    ///
    /// A refresh token is kept from the earlier record when the new grant has
    /// none: Google, for one, issues it only at the first consent.
    func store(_ grant: TokenGrant, provider: String, uid: String, screenName: String?) async throws(BrokerError) -> Account {
        let issuedAt = now()
        let id = Account.id(provider: provider, uid: uid)
        let stored: Account?
        do {
            stored = try await accounts.update(id: id) { existing in
                Account(
                    provider: provider,
                    uid: uid,
                    accessToken: grant.accessToken,
                    tokenType: grant.tokenType,
                    scope: grant.scope,
                    refreshToken: grant.refreshToken ?? existing?.refreshToken,
                    tokenSecret: grant.tokenSecret,
                    screenName: screenName ?? existing?.screenName,
                    // RFC 6749 §5.1: expires_in counts from when the response was generated.
                    expiresAt: Account.expiry(issuedAt: issuedAt, expiresIn: grant.expiresIn),
                    createdAt: existing?.createdAt ?? issuedAt,
                    updatedAt: issuedAt,
                    refreshedAt: nil,
                    status: .active
                )
            }
        } catch {
            throw BrokerError.storage(error)
        }
        guard let stored else { throw .storageUnavailable("update of account \(id) stored nothing") }
        return stored
    }
}
