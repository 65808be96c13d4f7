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
    /// Notes `HOST PATH` of `request` in ``FakeOAuth2Provider/Ledger/hostCalls``.
    func noteHost(_ request: Request) {
        let entry = (request.headers["Host"] ?? "") + " " + request.path
        state.withLock { $0.ledger.hostCalls.append(entry) }
    }

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
            return ConsentPage(
                provider: providerName, requestID: id, formAction: configuration.paths.authorize,
                redirectURI: pending.redirectURI, scope: pending.scope, user: userLabel,
                tokenLifetime: lifetime
            ).response()
        }
    }

    /// `POST authorize`: the consent page's Approve or Deny.
    func decide(_ request: Request) -> Response {
        let form = FakeWire.form(request)
        guard let id = form["request"], let decision = form["decision"], decision == "approve" || decision == "deny",
            let location = state.withLock({ $0.decide(id, approve: decision == "approve") })
        else {
            return ConsentPage.refusal(
                "This sign-in request is unknown, was answered already or has expired. "
                    + "Start again from the application.", provider: providerName)
        }
        // 303: the browser follows with GET (RFC 9110 §15.4.4).
        return Response(status: .seeOther, headers: HTTPHeaders([("Location", location), ("Cache-Control", "no-store")]))
    }

    /// `POST token` (and the refresh endpoint, when there is one): the code exchange and the refresh grant, after
    /// the provider's demands on the request and client authentication.
    func token(_ request: Request) async -> Response {
        let quirks = configuration.quirks
        let behaviour = state.withLock { s in
            s.ledger.tokenCalls += 1
            return s.behaviour
        }
        if let problem = headerProblem(request, "token") { return refuse(problem) }
        var form: [String: String]
        switch tokenParameters(request) {
        case .success(let parameters): form = parameters
        case .failure(let refusal): return refuse(refusal)
        }
        if dialect == .weibo {
            // Weibo also takes the parameters in the query string.
            form.merge(FakeWire.query(request)) { body, _ in body }
        }
        switch quirks.clientAuthentication {
        case nil:
            break
        case .body:
            if request.headers["Authorization"] != nil { return refuse("token: Authorization sent, credentials belong in the body") }
        case .basic:
            if form["client_secret"] != nil { return refuse("token: client_secret in the body, HTTP Basic wanted") }
            if FakeWire.clientCredentials(request, form: [:]) == nil { return refuse("token: no HTTP Basic credentials") }
        }
        guard let client = FakeWire.clientCredentials(request, form: form) else {
            return dialect == .weibo
                ? tokenError("invalid_request", "miss client id or secret")
                : tokenError("invalid_client", "Client authentication is required.")
        }
        guard client.id == configuration.clientID, client.secret == configuration.clientSecret else {
            state.withLock { $0.ledger.violations.append("token: wrong client credentials") }
            return tokenError(
                "invalid_client", dialect == .weibo ? "client_secret error." : "Client authentication failed.",
                basic: client.basic)
        }
        switch form["grant_type"] {
        case "authorization_code" where request.path == configuration.paths.token:
            if behaviour.exchangeDelay > 0 { try? await Task.sleep(nanoseconds: UInt64(behaviour.exchangeDelay * 1e9)) }
            var waited = 0
            while waited < 12_000 && state.withLock({ $0.behaviour.exchangeHeld }) {
                try? await Task.sleep(nanoseconds: 10_000_000)
                waited += 1
            }
            let (outcome, failure, uid) = state.withLock { s -> (OAuth2ProviderState.TokenOutcome?, FakeOAuth2Provider.Failure?, String) in
                let entry = s.takeCode(form)
                if let failure = s.behaviour.exchangeFailure { return (nil, failure, entry?.uid ?? s.currentUser) }
                return (s.exchange(entry, form: form), nil, "")
            }
            if let failure { return answer(failure, form: form, uid: uid) }
            return answer(withIDToken(outcome!, issuer: issuer(request)))
        case "refresh_token":
            state.withLock { s in
                s.ledger.refreshCalls += 1
                s.ledger.refreshesInFlight += 1
                s.ledger.maxRefreshesInFlight = max(s.ledger.maxRefreshesInFlight, s.ledger.refreshesInFlight)
            }
            if behaviour.refreshDelay > 0 { try? await Task.sleep(nanoseconds: UInt64(behaviour.refreshDelay * 1e9)) }
            var held = 0
            while held < 12_000 && state.withLock({ $0.behaviour.refreshHeld }) {
                try? await Task.sleep(nanoseconds: 10_000_000)
                held += 1
            }
            let (outcome, failure) = state.withLock { s -> (OAuth2ProviderState.TokenOutcome?, FakeOAuth2Provider.Failure?) in
                s.ledger.refreshesInFlight -= 1
                if let failure = s.behaviour.refreshFailure { return (nil, failure) }
                return (s.refresh(form), nil)
            }
            if let failure { return answer(failure, form: form, uid: "") }
            return answer(outcome!)
        case "client_credentials" where configuration.clientCredentials && request.path == configuration.paths.token:
            state.withLock { s in
                s.ledger.clientCredentialsCalls += 1
                s.ledger.clientCredentialsScopes.append(form["scope"])
            }
            if behaviour.clientCredentialsDelay > 0 { try? await Task.sleep(nanoseconds: UInt64(behaviour.clientCredentialsDelay * 1e9)) }
            let (outcome, failure) = state.withLock { s -> (OAuth2ProviderState.TokenOutcome?, FakeOAuth2Provider.Failure?) in
                if let failure = s.behaviour.clientCredentialsFailure { return (nil, failure) }
                return (s.appToken(scope: form["scope"]), nil)
            }
            if let failure { return answer(failure, form: form, uid: "") }
            return answer(outcome!)
        case "urn:ietf:params:oauth:grant-type:device_code" where request.path == configuration.paths.token:
            return answer(state.withLock { $0.pollDevice(form) })
        case nil:
            return tokenError("invalid_request", "grant_type is missing.")
        default:
            return tokenError("unsupported_grant_type", "This grant_type is not supported here.")
        }
    }

    private func answer(_ outcome: OAuth2ProviderState.TokenOutcome) -> Response {
        switch outcome {
        case .tokens(let tokens):
            guard let spell = configuration.quirks.tokenAnswer else { return dialect.tokenAnswer(tokens) }
            let body = spell(
                FakeOAuth2Provider.TokenAnswer(
                    accessToken: tokens.accessToken, refreshToken: tokens.refreshToken,
                    expiresIn: tokens.expiresIn, scope: tokens.scope,
                    refreshing: tokens.refreshing))
            return FakeWire.answer(.ok, dialect.jsonLabel, body, extra: dialect.answerFields)
        case .error(let code, let description):
            return tokenError(code, description)
        case .raw(let body):
            return FakeWire.answer(.ok, dialect.jsonLabel, body, extra: dialect.answerFields)
        }
    }

    /// The answer of a ``FakeOAuth2Provider/Failure``; `invalid_grant` in the provider's own error shape when it has one.
    private func answer(_ failure: FakeOAuth2Provider.Failure, form: [String: String], uid: String) -> Response {
        if failure == .invalidGrant, configuration.quirks.errorAnswer != nil {
            return tokenError("invalid_grant", "The grant is invalid, expired or revoked.")
        }
        return dialect.failure(failure, form: form, clientSecret: configuration.clientSecret, uid: uid)
    }

    /// A token-endpoint error: in ``FakeOAuth2Provider/Quirks/errorAnswer``'s shape when set (with `status`, when
    /// given, instead of the shape's), else the dialect's.
    private func tokenError(_ error: String, _ description: String, basic: Bool = false, status: HTTPStatus? = nil) -> Response {
        if let shape = configuration.quirks.errorAnswer {
            let (shapeStatus, body) = shape(error)
            return FakeWire.answer(status ?? shapeStatus, dialect.jsonLabel, body, extra: dialect.answerFields)
        }
        var response = dialect.tokenError(error, description, basic: basic)
        if let status { response.status = status }
        return response
    }

    /// A demand of the provider the request missed: recorded in the ledger, and answered in the provider's error shape.
    private func refuse(_ refusal: Refusal) -> Response {
        state.withLock { $0.ledger.violations.append(refusal.reason) }
        return tokenError(refusal.code, refusal.reason, status: refusal.status)
    }

    private func refuse(_ reason: String) -> Response { refuse(Refusal(reason)) }

    /// Why the request lacks a header field the provider demands of every call; nil when it has them all.
    private func headerProblem(_ request: Request, _ endpoint: String) -> String? {
        for (name, value) in configuration.quirks.headers.sorted(by: { $0.key < $1.key }) where request.headers[name] != value {
            return "\(endpoint): \(name) is \(request.headers[name] ?? "missing"), not \(value)"
        }
        return nil
    }

    /// The token request's parameters in the body format the provider demands, or why not.
    private func tokenParameters(_ request: Request) -> Result<[String: String], Refusal> {
        guard let format = configuration.quirks.tokenRequestFormat else { return .success(FakeWire.form(request)) }
        let contentType = request.headers["Content-Type"] ?? "none"
        switch format {
        case .form:
            guard contentType.lowercased().hasPrefix("application/x-www-form-urlencoded") else {
                return .failure(Refusal("token: Content-Type \(contentType), not application/x-www-form-urlencoded"))
            }
            return .success(FakeWire.form(request))
        case .json:
            guard contentType.lowercased().hasPrefix("application/json") else {
                return .failure(Refusal("token: Content-Type \(contentType), not application/json"))
            }
            guard let parameters = FakeWire.jsonStrings(request) else {
                return .failure(Refusal("token: the body is not a JSON object of strings"))
            }
            return .success(parameters)
        }
    }

    /// `GET user` (or `POST`, as the provider asks): who the presented access token belongs to.
    func user(_ request: Request) -> Response {
        if let problem = headerProblem(request, "user") { return refuse(problem) }
        let token: String?
        if let asked = configuration.quirks.userRequest {
            switch askedToken(request, asked) {
            case .success(let presented): token = presented
            case .failure(let refusal): return refuse(refusal)
            }
        } else {
            switch dialect {
            case .rfc6749:
                token = FakeWire.bearerToken(request)
            case .weibo:
                // Weibo takes the token as `access_token` or as `Authorization: OAuth2 …`.
                let header = request.headers["Authorization"].flatMap { $0.hasPrefix("OAuth2 ") ? String($0.dropFirst(7)) : nil }
                token = request.query("access_token") ?? header
            }
        }
        let (uid, body) = state.withLock { ($0.user(token), $0.behaviour.userBody) }
        guard let uid else { return dialect.userRefusal() }
        if let body { return FakeWire.answer(.ok, "application/json;charset=UTF-8", body) }
        return dialect.userAnswer(uid: uid, login: configuration.login, name: configuration.displayName, email: configuration.email)
    }

    /// `GET` of a ``FakeOAuth2Provider/Quirks/resources`` document: its JSON for a live Bearer token, else 401.
    func resource(_ request: Request) -> Response {
        if let problem = headerProblem(request, "resource") { return refuse(problem) }
        let token = FakeWire.bearerToken(request)
        guard let body = configuration.quirks.resources[request.path], state.withLock({ $0.owner(of: token) }) != nil else {
            return FakeWire.answer(.unauthorized, "application/json", "{\"code\":401,\"message\":\"Unauthorized\"}")
        }
        return FakeWire.answer(.ok, "application/json", body)
    }

    /// The access token the user endpoint was asked about, or why it was not asked the provider's way.
    private func askedToken(_ request: Request, _ asked: FakeOAuth2Provider.Quirks.UserRequest) -> Result<String, Refusal> {
        switch asked {
        case .header(let scheme):
            guard request.method == .GET, let header = request.headers["Authorization"], header.hasPrefix(scheme + " ") else {
                return .failure(Refusal("user: GET with Authorization: \(scheme) wanted", status: .unauthorized))
            }
            return .success(String(header.dropFirst(scheme.count + 1)))
        case .jsonPost(let containing):
            guard request.method == .POST, (request.headers["Content-Type"] ?? "").lowercased().hasPrefix("application/json"),
                let token = FakeWire.bearerToken(request), String(decoding: request.body, as: UTF8.self).contains(containing)
            else {
                return .failure(Refusal("user: a POSTed JSON query for \(containing) with a Bearer token wanted"))
            }
            return .success(token)
        case .introspection:
            let form = FakeWire.form(request)
            guard request.method == .POST, let token = form["token"], form["client_id"] == configuration.clientID,
                form["client_secret"] == configuration.clientSecret
            else {
                return .failure(Refusal("user: a form with token and the client credentials wanted"))
            }
            return .success(token)
        }
    }

    /// `POST revoke`: forgets the token (RFC 7009 §2.1; Weibo's `access_token` parameter), asked the provider's way.
    /// Without a ``FakeOAuth2Provider/Quirks/revocation``, credentials are checked only when sent. With a
    /// ``FakeOAuth2Provider/Behaviour/revokeFailure`` the call is counted and answered with that status, and nothing is revoked.
    func revoke(_ request: Request) -> Response {
        if let problem = headerProblem(request, "revoke") { return refuse(problem) }
        let token: String?
        if let revocation = configuration.quirks.revocation {
            switch revokedToken(request, revocation) {
            case .success(let named): token = named
            case .failure(let refusal): return refuse(refusal)
            }
        } else {
            var form = FakeWire.form(request)
            form.merge(FakeWire.query(request)) { body, _ in body }
            if let client = FakeWire.clientCredentials(request, form: form),
                client.id != configuration.clientID || client.secret != configuration.clientSecret
            {
                return tokenError("invalid_client", "Client authentication failed.", basic: client.basic)
            }
            token = dialect == .weibo ? form["access_token"] : form["token"]
        }
        let failure = state.withLock { s -> HTTPStatus? in
            guard let failure = s.behaviour.revokeFailure else {
                s.revoke(token)
                return nil
            }
            s.ledger.revokeCalls += 1
            return failure
        }
        if let failure {
            return FakeWire.answer(
                failure, "application/json",
                "{\"error\":\"temporarily_unavailable\",\"error_description\":\"Revocation is failing on purpose.\"}")
        }
        if let answer = configuration.quirks.revokeAnswer {
            let headers = answer.body == nil ? HTTPHeaders() : HTTPHeaders([("Content-Type", "application/json")])
            return Response(status: answer.status, headers: headers, body: Array((answer.body ?? "").utf8))
        }
        return dialect.revokeAnswer()
    }

    /// The token a revocation request names, or why the request is not the provider's.
    private func revokedToken(_ request: Request, _ revocation: FakeOAuth2Provider.Quirks.Revocation) -> Result<String, Refusal> {
        switch revocation {
        case .bearer:
            guard request.body.isEmpty, let token = FakeWire.bearerToken(request) else {
                return .failure(Refusal("revoke: a Bearer token and no body wanted"))
            }
            return .success(token)
        case .json:
            guard (request.headers["Content-Type"] ?? "").lowercased().hasPrefix("application/json"),
                let body = FakeWire.jsonStrings(request), let token = body["token"]
            else {
                return .failure(Refusal("revoke: a JSON body with token wanted"))
            }
            if let refusal = revocationClientProblem(request, body: body, client: .credentials) { return .failure(refusal) }
            return .success(token)
        case .form(let parameter, let client):
            let body = FakeWire.form(request)
            guard let token = body[parameter] else { return .failure(Refusal("revoke: a form with \(parameter) wanted")) }
            if let refusal = revocationClientProblem(request, body: body, client: client) { return .failure(refusal) }
            return .success(token)
        }
    }

    private func revocationClientProblem(
        _ request: Request, body: [String: String],
        client: FakeOAuth2Provider.Quirks.RevocationClient
    ) -> Refusal? {
        let basic = FakeWire.clientCredentials(request, form: [:])
        switch client {
        case .none:
            return body["client_id"] == nil && basic == nil ? nil : Refusal("revoke: client identification sent unasked")
        case .clientID:
            return body["client_id"] == configuration.clientID && body["client_secret"] == nil && basic == nil
                ? nil : Refusal("revoke: client_id alone wanted")
        case .credentials:
            let given =
                configuration.quirks.clientAuthentication == .basic
                ? basic.map { ($0.id, $0.secret) }
                : body["client_id"].map { ($0, body["client_secret"] ?? "") }
            return given.map { $0 == (configuration.clientID, configuration.clientSecret) } == true
                ? nil : Refusal("revoke: client credentials wanted")
        }
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

/// Why the fake refused a request that missed one of its provider's demands.
struct Refusal: Error {
    let reason: String
    let code: String
    let status: HTTPStatus

    init(_ reason: String, code: String = "invalid_request", status: HTTPStatus = .badRequest) {
        self.reason = reason
        self.code = code
        self.status = status
    }
}
