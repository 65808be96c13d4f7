import BrokerCrypto
import Foundation

/// TMDB API v3 session authentication for one provider: request token, the user's approval, session id, account; logout as revocation.
///
/// TMDB v3 has no `state` of its own: the broker's state rides in `redirect_to`
/// and the request token is kept in the flow, so only this browser can use it.
/// The session id is the account's token; it has no expiry and no refresh.
struct TMDBSessionExchange: ProviderExchange {
    /// The provider's settings (`kind: tmdb`).
    let settings: TMDBSettings
    /// The broker around the exchange.
    let context: ExchangeContext

    /// The client that speaks to TMDB.
    var client: TMDBClient { TMDBClient(settings: settings, call: context.call) }

    /// Revocation (session logout); no refresh.
    var capabilities: ExchangeCapabilities { [.revoke] }

    /// Gets a request token for the flow and TMDB's approval URL, redirecting back with the state.
    ///
    /// The flow lives no longer than the token: 60 minutes, counted on the broker's clock.
    func begin(state: String, binding: String) async throws(BrokerError) -> ExchangeStart {
        let client = self.client
        let requestToken = try await client.createRequestToken()
        let redirectTo = FormEncoding.url(context.redirectURI, adding: [("state", state)])
        return ExchangeStart(
            authorizeURL: client.approvalURL(requestToken: requestToken, redirectTo: redirectTo),
            requestToken: requestToken, maximumLifetime: TMDBClient.requestTokenLifetime)
    }

    /// Checks approval and the request token, creates the session and names the account.
    ///
    /// Order: a refusal (`denied`, or `approved` other than `true`) → the
    /// callback's `request_token` equals this flow's → `approved=true`; each
    /// refusal makes no session call.
    func complete(callback query: [String: String], flow: PendingFlow) async throws(BrokerError) -> ExchangeCompletion {
        let query = Self.repaired(query)
        if let denied = query["denied"], denied.lowercased() != "false" { throw .accessDenied }
        if let approved = query["approved"], approved != "true" { throw .accessDenied }
        guard let expected = flow.requestToken, let token = query["request_token"], ConstantTime.equals(token, expected) else {
            throw .invalidState
        }
        guard query["approved"] == "true" else { throw .accessDenied }
        let client = self.client
        let session = try await client.createSession(requestToken: token)
        let user: (uid: String, username: String?)
        do {
            user = try await client.fetchAccount(sessionID: session)
        } catch {
            // Nothing will hold this session, so it is logged out rather than left live (best effort).
            try? await client.deleteSession(session)
            throw error
        }
        return ExchangeCompletion(
            grant: TokenGrant(accessToken: session, screenName: user.username), uid: user.uid, screenName: user.username)
    }

    /// Logs the session out.
    func revoke(_ account: Account) async throws(BrokerError) {
        try await client.deleteSession(account.accessToken)
    }

    /// The callback query with the parameters TMDB glued onto the state split back out.
    ///
    /// TMDB may append `?request_token=…&approved=true` to a `redirect_to` that
    /// already has `?state=…`, which leaves `S?request_token=…` in `state`. A
    /// state never holds `?`, so what follows one is parsed as parameters; a
    /// parameter the query already has keeps its first value.
    static func repaired(_ query: [String: String]) -> [String: String] {
        guard let state = query["state"], let mark = state.firstIndex(of: "?") else { return query }
        var query = query
        query["state"] = String(state[..<mark])
        for item in PercentEncoding.parseForm(String(state[state.index(after: mark)...])) where query[item.name] == nil {
            query[item.name] = item.value
        }
        return query
    }
}
