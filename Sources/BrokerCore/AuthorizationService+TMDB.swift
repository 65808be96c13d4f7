import BrokerCrypto
import Foundation

extension AuthorizationService {
    /// Gets a TMDB request token, binds it to the flow, and sends the browser to TMDB's approval page.
    ///
    /// TMDB v3 has no `state` of its own: the broker's state rides in `redirect_to`
    /// and the request token is kept in the flow, so only this browser can use it.
    /// The flow lives no longer than the token: 60 minutes, counted on our clock.
    func beginTMDB(_ provider: ProviderConfiguration, returnTo: String?, binding: String) async throws(BrokerError) -> AuthorizationStart {
        let state = Self.makeState()
        let client = TMDBClient(provider: provider, upstream: upstream)
        let requestToken = try await client.createRequestToken()
        let createdAt = now()
        let flow = PendingFlow(
            state: state,
            provider: provider.name,
            binding: binding,
            requestToken: requestToken,
            returnTo: returnTo,
            createdAt: createdAt,
            expiresAt: createdAt.addingTimeInterval(min(flowTTL, TMDBClient.requestTokenLifetime))
        )
        do {
            try await flows.put(flow)
        } catch {
            throw BrokerError.storage(error)
        }
        let redirectTo = FormEncoding.url(redirectURI, adding: [("state", state)])
        return AuthorizationStart(authorizeURL: client.approvalURL(requestToken: requestToken, redirectTo: redirectTo),
                                  state: state, expiresAt: flow.expiresAt)
    }

    /// Checks approval and the request token, creates the session, names the account and stores it.
    ///
    /// Order: a refusal (`denied`, or `approved` other than `true`) → the
    /// callback's `request_token` equals this flow's → `approved=true`; each
    /// refusal makes no session call. The session id is the account's token; it has no expiry.
    func completeTMDB(_ flow: PendingFlow, provider: ProviderConfiguration, query: [String: String]) async throws(BrokerError) -> Account {
        if let denied = query["denied"], denied.lowercased() != "false" { throw .accessDenied }
        if let approved = query["approved"], approved != "true" { throw .accessDenied }
        guard let expected = flow.requestToken, let token = query["request_token"], ConstantTime.equals(token, expected) else {
            throw .invalidState
        }
        guard query["approved"] == "true" else { throw .accessDenied }
        let client = TMDBClient(provider: provider, upstream: upstream)
        let session = try await client.createSession(requestToken: token)
        let user: (uid: String, username: String?)
        do {
            user = try await client.fetchAccount(sessionID: session)
        } catch {
            // Nothing will hold this session, so it is logged out rather than left live (best effort).
            try? await client.deleteSession(session)
            throw error
        }
        let grant = TokenGrant(accessToken: session, screenName: user.username)
        return try await store(grant, provider: provider.name, uid: user.uid, screenName: user.username)
    }
}
