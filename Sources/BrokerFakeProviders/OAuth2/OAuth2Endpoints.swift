import BrokerHTTP
import Foundation
import Synchronization

/// The HTTP side of a ``FakeOAuth2Provider``: reads requests, steps ``OAuth2ProviderState`` under its lock, writes the dialect's answers.
final class OAuth2Endpoints: Sendable {
    let configuration: FakeOAuth2Provider.Configuration
    let state: Mutex<OAuth2ProviderState>

    init(_ initial: OAuth2ProviderState) {
        configuration = initial.configuration
        state = Mutex(initial)
    }

    private var dialect: OAuth2Dialect { configuration.dialect }

    /// `GET authorize`: checks the request, then redirects with a code or an error, or shows the consent page.
    func authorize(_ request: Request) -> Response {
        let query = FakeWire.query(request)
        let outcome = state.withLock { $0.authorize(query, referer: request.headers["Referer"]) }
        switch outcome {
        case .refuse(let reason):
            return ConsentPage.refusal(reason, provider: providerName)
        case .redirect(let location):
            return FakeWire.redirect(location)
        case .ask(let id):
            let (pending, lifetime) = state.withLock { ($0.pendingRequest(id), $0.behaviour.accessTokenLifetime) }
            guard let pending else { return ConsentPage.refusal("This sign-in request has expired.", provider: providerName) }
            return ConsentPage(provider: providerName, requestID: id, formAction: dialect.paths.authorize,
                               redirectURI: pending.redirectURI, scope: pending.scope, user: userLabel,
                               tokenLifetime: lifetime).response()
        }
    }

    /// `POST authorize`: the consent page's Approve or Deny.
    func decide(_ request: Request) -> Response {
        let form = FakeWire.form(request)
        guard let id = form["request"], let decision = form["decision"], decision == "approve" || decision == "deny",
              let location = state.withLock({ $0.decide(id, approve: decision == "approve") }) else {
            return ConsentPage.refusal("This sign-in request is unknown, was answered already or has expired. "
                                       + "Start again from the application.", provider: providerName)
        }
        // 303: the browser follows with GET (RFC 9110 §15.4.4).
        return Response(status: .seeOther, headers: HTTPHeaders([("Location", location), ("Cache-Control", "no-store")]))
    }

    /// `POST token`: the code exchange and the refresh grant, after client authentication.
    func token(_ request: Request) async -> Response {
        var form = FakeWire.form(request)
        if dialect == .weibo {
            // Weibo also takes the parameters in the query string.
            form.merge(FakeWire.query(request)) { body, _ in body }
        }
        let behaviour = state.withLock { s in
            s.ledger.tokenCalls += 1
            return s.behaviour
        }
        guard let client = FakeWire.clientCredentials(request, form: form) else {
            return dialect == .weibo
                ? dialect.tokenError("invalid_request", "miss client id or secret")
                : dialect.tokenError("invalid_client", "Client authentication is required.")
        }
        guard client.id == configuration.clientID, client.secret == configuration.clientSecret else {
            return dialect.tokenError("invalid_client", dialect == .weibo ? "client_secret error." : "Client authentication failed.",
                                      basic: client.basic)
        }
        switch form["grant_type"] {
        case "authorization_code":
            if behaviour.exchangeDelay > 0 { try? await Task.sleep(nanoseconds: UInt64(behaviour.exchangeDelay * 1e9)) }
            let (outcome, failure, uid) = state.withLock { s -> (OAuth2ProviderState.TokenOutcome?, FakeOAuth2Provider.Failure?, String) in
                let entry = s.takeCode(form)
                if let failure = s.behaviour.exchangeFailure { return (nil, failure, entry?.uid ?? s.currentUser) }
                return (s.exchange(entry, form: form), nil, "")
            }
            if let failure { return dialect.failure(failure, form: form, clientSecret: configuration.clientSecret, uid: uid) }
            return answer(outcome!)
        case "refresh_token":
            state.withLock { $0.ledger.refreshCalls += 1 }
            if behaviour.refreshDelay > 0 { try? await Task.sleep(nanoseconds: UInt64(behaviour.refreshDelay * 1e9)) }
            let (outcome, failure) = state.withLock { s -> (OAuth2ProviderState.TokenOutcome?, FakeOAuth2Provider.Failure?) in
                if let failure = s.behaviour.refreshFailure { return (nil, failure) }
                return (s.refresh(form), nil)
            }
            if let failure { return dialect.failure(failure, form: form, clientSecret: configuration.clientSecret, uid: "") }
            return answer(outcome!)
        case nil:
            return dialect.tokenError("invalid_request", "grant_type is missing.")
        default:
            return dialect.tokenError("unsupported_grant_type", "Only authorization_code and refresh_token are supported.")
        }
    }

    private func answer(_ outcome: OAuth2ProviderState.TokenOutcome) -> Response {
        switch outcome {
        case .tokens(let tokens): dialect.tokenAnswer(tokens)
        case .error(let code, let description): dialect.tokenError(code, description)
        case .raw(let body): FakeWire.answer(.ok, dialect.jsonLabel, body, extra: dialect.answerFields)
        }
    }

    /// `GET user`: who the presented access token belongs to.
    func user(_ request: Request) -> Response {
        // Weibo takes the token as `access_token` or as `Authorization: OAuth2 …`.
        let token: String?
        switch dialect {
        case .rfc6749:
            token = FakeWire.bearerToken(request)
        case .weibo:
            let header = request.headers["Authorization"].flatMap { $0.hasPrefix("OAuth2 ") ? String($0.dropFirst(7)) : nil }
            token = request.query("access_token") ?? header
        }
        let (uid, body) = state.withLock { ($0.user(token), $0.behaviour.userBody) }
        guard let uid else { return dialect.userRefusal() }
        if let body { return FakeWire.answer(.ok, "application/json;charset=UTF-8", body) }
        return dialect.userAnswer(uid: uid, login: configuration.login, name: configuration.displayName)
    }

    /// `POST revoke`: forgets the token (RFC 7009 §2.1; Weibo's `access_token` parameter). Credentials, when sent, must be right.
    func revoke(_ request: Request) -> Response {
        var form = FakeWire.form(request)
        form.merge(FakeWire.query(request)) { body, _ in body }
        if let client = FakeWire.clientCredentials(request, form: form),
           client.id != configuration.clientID || client.secret != configuration.clientSecret {
            return dialect.tokenError("invalid_client", "Client authentication failed.", basic: client.basic)
        }
        let token = dialect == .weibo ? form["access_token"] : form["token"]
        state.withLock { $0.revoke(token) }
        return dialect.revokeAnswer()
    }

    /// The name the consent page shows.
    private var providerName: String {
        if case .page(let name) = configuration.consent { return name }
        return dialect == .weibo ? "Fake Weibo" : "Fake OAuth 2.0 provider"
    }

    /// How the consent page names the account being connected.
    private var userLabel: String {
        let uid = state.withLock { $0.currentUser }
        if let name = configuration.login ?? configuration.displayName { return "\(name) (user id \(uid))" }
        return "user id \(uid)"
    }
}
