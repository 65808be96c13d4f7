import BrokerCrypto
import Foundation

extension AuthorizationService {
    /// An OAuth 1.0a client for `provider` whose timestamps come from the injected clock.
    func oauth1Client(_ provider: ProviderConfiguration) -> OAuth1Client {
        let now = self.now
        return OAuth1Client(provider: provider, upstream: upstream, timestamp: { Int(now().timeIntervalSince1970) })
    }

    /// Gets temporary credentials, keeps their secret in the flow only, and sends the browser to the provider with the token.
    ///
    /// Twitter's callback carries no `state`: a browser flow is found again through
    /// the flow cookie. A flow driven by a back end has no cookie, so its state rides
    /// in `oauth_callback`'s query, which the provider keeps (RFC 5849 §2.2).
    func beginOAuth1(_ provider: ProviderConfiguration, returnTo: String?, binding: String) async throws(BrokerError) -> AuthorizationStart {
        let state = Self.makeState()
        let callback = binding == Self.apiBinding ? FormEncoding.url(redirectURI, adding: [("state", state)]) : redirectURI
        let client = oauth1Client(provider)
        let temporary = try await client.requestTemporaryCredentials(callback: callback)
        let createdAt = now()
        let flow = PendingFlow(
            state: state,
            provider: provider.name,
            binding: binding,
            requestToken: temporary.token,
            requestTokenSecret: temporary.secret,
            returnTo: returnTo,
            createdAt: createdAt,
            expiresAt: createdAt.addingTimeInterval(flowTTL)
        )
        do {
            try await flows.put(flow)
        } catch {
            throw BrokerError.storage(error)
        }
        return AuthorizationStart(authorizeURL: client.authorizeURL(requestToken: temporary.token), state: state, expiresAt: flow.expiresAt)
    }

    /// Checks the callback against the flow, trades the verifier for token credentials, names the user and stores the account.
    ///
    /// Order: `denied` → the callback's `oauth_token` equals this flow's request
    /// token → a verifier; every refusal makes no provider call.
    func completeOAuth1(_ flow: PendingFlow, provider: ProviderConfiguration, query: [String: String]) async throws(BrokerError) -> Account {
        // Twitter's cancel button: `?denied=<request token>` and no verifier.
        if query["denied"] != nil { throw .accessDenied }
        // RFC 5849 §2.2 and OAuth Security Advisory 2009.1: only the token issued to this browser's flow completes it.
        guard let expected = flow.requestToken, let secret = flow.requestTokenSecret,
              let token = query["oauth_token"], ConstantTime.equals(token, expected) else { throw .invalidState }
        guard let verifier = query["oauth_verifier"], !verifier.isEmpty else {
            throw .badRequest("The callback has neither an oauth_verifier nor denied")
        }
        let client = oauth1Client(provider)
        let grant = try await client.requestTokenCredentials(requestToken: token, requestTokenSecret: secret, verifier: verifier)
        let tokenSecret = grant.tokenSecret ?? Secret("")
        var uid = grant.uid
        var screenName = grant.screenName
        if let known = uid {
            try ProviderUserID.check(known, step: "access_token")
            if provider.userURL != nil, let user = try await profile(client, grant.accessToken, tokenSecret) {
                // The same credentials cannot name two users; a provider that says so is not trusted.
                guard ExactKey.same(user.uid, known) else {
                    throw .upstreamError(step: "user_info", reason: "the user response names another user than the access token")
                }
                screenName = user.screenName ?? screenName
            }
        } else {
            let user = try await client.fetchUser(token: grant.accessToken, tokenSecret: tokenSecret)
            uid = user.uid
            screenName = screenName ?? user.screenName
        }
        return try await store(grant, provider: provider.name, uid: uid ?? "", screenName: screenName)
    }

    /// The profile when the user endpoint answers, nil when it fails: the user is already named, so a profile is optional.
    ///
    /// Twitter's free API tier refuses `verify_credentials` (403, code 453) although the tokens are good.
    private func profile(_ client: OAuth1Client, _ token: Secret, _ tokenSecret: Secret) async throws(BrokerError) -> (uid: String, screenName: String?)? {
        do {
            return try await client.fetchUser(token: token, tokenSecret: tokenSecret)
        } catch .upstreamError, .upstreamTimeout {
            return nil
        } catch {
            throw error
        }
    }
}
