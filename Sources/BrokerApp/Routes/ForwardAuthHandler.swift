import BrokerCore
import BrokerHTTP

/// `/auth`: forward authentication for gateways (nginx `auth_request`, Traefik ForwardAuth, Envoy `ext_authz`).
///
/// The gateway asks, with the API key and the account named as ``AccountSelector``
/// reads it, before it passes a request on to a protected upstream; `200` carries
/// the account's current token in `Authorization: Bearer …`, which the gateway
/// copies onto the upstream request, so the service behind it is called with the
/// token without its caller ever holding it. The token is refreshed first when it
/// is due, exactly as `GET /account` does (one refresh across replicas). Any method
/// is answered alike: nginx's subrequest keeps the method of the request it guards.
struct ForwardAuthHandler: Sendable {
    let accounts: AccountService
    let registry: ProviderRegistry
    let access: AccessControl
    let audit: AuditTrail

    /// Answers a gateway's question: `200` with the token header, else the error of `GET /account`.
    func authenticate(_ request: Request) async -> Response {
        // The API key only: a browser's cookie reaching /auth through a gateway must not unlock its accounts there.
        let who: AccessControl.Caller
        do { who = try access.authorize(request, .tokensRead) } catch { return error.response }
        let caller = who.name
        var named: String?
        var storedID: AccountID?
        do throws(BrokerError) {
            let id = try await AccountSelector.from(request, readingQuery: true).resolve(in: accounts)
            named = id
            if let provider = AccountID(id)?.provider { try who.grant.require(provider: provider) }
            let stored = try AccountID.stored(id)
            storedID = stored
            try await who.requireStored(stored, in: accounts)
            let account = try await accounts.account(id: stored)
            let authorization = try Self.authorization(for: account, kind: registry.provider(named: account.provider)?.kind)
            audit.record(.tokenForwarded, account, caller: caller, request: request, scope: who.audited(.tokensRead))
            return Response(
                status: .ok,
                headers: HTTPHeaders([
                    ("Authorization", authorization), ("Broker-Account", account.id), ("Cache-Control", "no-store"),
                ]))
        } catch {
            if let named { audit.record(.tokenForwarded, accountID: named, caller: caller, request: request, outcome: error.code) }
            var response = error.response
            if let id = storedID, error.isUpstreamFailure, let seconds = await accounts.retryAfter(accountID: id) {
                response.headers.add(name: "Retry-After", value: String(seconds))
            }
            return response
        }
    }

    /// The `Authorization` value a service behind the gateway is called with: the bearer token (RFC 6750 §2.1) of an
    /// OAuth 2.0 or OpenID Connect account. OAuth 1.0a and TMDB credentials do not fit in one header.
    static func authorization(for account: Account, kind: ProviderKind?) throws(BrokerError) -> String {
        switch kind {
        case .oauth2?, .oidc?, .mcp?, nil:
            // A header value is one line (RFC 9110 §5.5): a token with a control byte would split or end it.
            guard account.accessToken.value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else {
                throw .credentialNotForwardable(reason: "the stored token has bytes a header cannot carry")
            }
            return "Bearer " + account.accessToken.value
        case .oauth1?:
            throw .credentialNotForwardable(reason: "an OAuth 1.0a token signs each request with its token secret (RFC 5849)")
        case .tmdb?:
            throw .credentialNotForwardable(reason: "a TMDB session id travels in the query (session_id), not in a header")
        case .apiKey?, .basic?, .bearer?:
            throw .credentialNotForwardable(reason: "an entered credential is placed by the API proxy (/proxy/), not forwarded")
        }
    }
}
