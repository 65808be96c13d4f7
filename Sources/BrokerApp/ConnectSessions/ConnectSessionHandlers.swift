import BrokerCore
import BrokerCrypto
import BrokerHTTP
import Foundation

/// Connect sessions: `POST /connect/sessions` for back ends, the hosted page at `GET /connect` and its provider
/// choice `GET /connect/start` for the popup, and `/connect.js` for the front end.
///
/// A session token lets its holder run one connection and nothing else: it reads no token and lists nothing. The
/// account it connects is not added to the browser's session cookie, since a back end started the flow.
struct ConnectSessionHandlers: Sendable {
    let authorization: AuthorizationService
    let registry: ProviderRegistry
    let accounts: AccountService
    let access: AccessControl
    let cookies: CookieHeader
    let appearance: PageAppearance
    /// The front-end origins (`BROKER_CORS_ORIGINS`): a session's origin must be one of them.
    let origins: [String]
    /// `BROKER_PUBLIC_URL` without a trailing slash.
    let publicURL: String
    let flowTTL: Double
    let logger: BrokerLogger
    /// Verifies what a person enters on the form of an `api_key`, `basic` or `bearer` provider.
    let verifier: CredentialVerifier
    /// Where a form's stored credential is recorded, as a sign-in's completion is (`flow_completed`, by the browser).
    let audit: AuditTrail
    /// The refusals of each shown credential form (``maximumRefusals``).
    let formRefusals = FormRefusals()

    /// The cookie binding an opened session's provider choice to the browser: `<key>.<nonce>`.
    static let choiceCookie = "tb_connect"

    /// `POST /connect/sessions` (API key): `{token, connect_url, expires_at}`, 201.
    func create(_ request: Request) async -> Response {
        do {
            let caller = try access.authorize(request, .connect)
            try StrictInput.query(request, allowed: [])
            let body = try Self.jsonObject(request)
            try StrictInput.fields(
                Array(body.keys),
                allowed: [
                    "end_user_id", "end_user_email", "end_user_name", "tags", "origin", "allowed_providers", "account_id", "scopes",
                    "return_to", "expires_in", "settings",
                ])
            let form = RequestForm(request)
            let owner = try OwnerParameters.owner(form)
            guard let endUser = owner.endUser else { throw BrokerError.badRequest("end_user_id is required") }
            try caller.grant.require(endUser: endUser.id)
            guard let origin = try Self.string(body, "origin") else {
                throw BrokerError.badRequest("origin is required: the front end's origin, one of BROKER_CORS_ORIGINS")
            }
            guard origins.contains(where: { ExactKey.same($0, origin) }) else {
                throw BrokerError.badRequest("origin must be one of BROKER_CORS_ORIGINS, exactly (scheme, host and port)")
            }
            var sessionRequest = AuthorizationService.ConnectSessionRequest(endUser: endUser, origin: origin, tags: owner.tags)
            sessionRequest.allowedProviders = try Self.strings(body, "allowed_providers") ?? []
            // A key limited to some providers offers only those: none named means all of its own.
            if let limited = caller.grant.providers {
                if sessionRequest.allowedProviders.isEmpty { sessionRequest.allowedProviders = limited }
                for name in sessionRequest.allowedProviders {
                    try caller.grant.require(provider: registry.provider(named: name)?.name ?? name)
                }
            }
            if let raw = try Self.string(body, "account_id") {
                guard let id = AccountID(raw) else { throw BrokerError.badRequest("account_id is not an account id") }
                try caller.grant.require(provider: id.provider)
                try await caller.requireStored(id, in: accounts)
                sessionRequest.reconnectAccountID = id
            }
            sessionRequest.scopes = try Self.scopes(body)
            sessionRequest.returnTo = try Self.string(body, "return_to")
            sessionRequest.settings = try CredentialHandlers.settings(body["settings"])
            if let value = body["expires_in"] {
                guard let seconds = value as? Int, !(value is Bool),
                    (60...Int(AuthorizationService.connectSessionMaximumLifetime)).contains(seconds)
                else { throw BrokerError.badRequest("expires_in must be an integer number of seconds from 60 to 1800") }
                sessionRequest.lifetime = Double(seconds)
            }
            let session = try await authorization.createConnectSession(sessionRequest)
            logger.log(.info, "connect session created", [("caller", .string(caller.name)), ("origin", .string(origin))])
            return Response.json(
                .created,
                AccountJSON.object([
                    ("token", JSONString.quote(session.token)),
                    ("connect_url", JSONString.quote(publicURL + "/connect?session=" + session.token)),
                    ("expires_at", AccountJSON.date(session.expiresAt)),
                ]), headers: OAuthHandlers.noStore())
        } catch let error as BrokerError {
            return error.response
        } catch {
            return BrokerError.badRequest("The body must be a JSON object").response
        }
    }

    /// `GET /connect?session=TOKEN`: takes the session (once), then shows the providers it allows, or goes straight
    /// to the provider of a reconnect.
    func open(_ request: Request) async -> Response {
        let token = request.query("session") ?? ""
        let session: PendingFlow
        do {
            session = try await authorization.openConnectSession(token: token)
        } catch {
            return gone(error, request: request)
        }
        guard let connect = session.connect else { return gone(.connectSessionGone, request: request) }
        let nonce = SecureRandom.token()
        if let id = connect.reconnectAccountID, let provider = AccountID(id)?.provider {
            return await start(session, provider: provider, nonce: nonce, extra: HTTPHeaders())
        }
        do {
            let key = try await authorization.holdProviderChoice(session, cookieNonce: nonce)
            var extra = OAuthHandlers.noStore()
            let remaining = max(1, Int(session.expiresAt.timeIntervalSince(Date()).rounded(.down)))
            extra.add(name: "Set-Cookie", value: cookies.set(Self.choiceCookie, key + "." + nonce, path: "/connect", maxAge: remaining))
            let providers = registry.all.filter { ($0.offersSignIn || Self.takesForm($0)) && connect.allows($0.name) }
            return ConnectPickerPage(
                providers: providers.map {
                    ConnectPage.ProviderItem(name: $0.name, displayName: $0.displayedName, iconURL: $0.iconURL)
                }, appearance: appearance
            ).page().response(.ok, extra: extra)
        } catch {
            return end(session, state: nil, result: .failure(error), extra: HTTPHeaders())
        }
    }

    /// `GET /connect/start?provider=P`: the provider chosen on the hosted page; starts its sign-in.
    func choose(_ request: Request) async -> Response {
        let pair = request.cookies[Self.choiceCookie].flatMap(OAuthHandlers.splitFlowCookie)
        var extra = OAuthHandlers.noStore()
        extra.add(name: "Set-Cookie", value: cookies.clear(Self.choiceCookie, path: "/connect"))
        let session: PendingFlow
        do {
            session = try await authorization.takeProviderChoice(key: pair?.state ?? "", cookieNonce: pair?.nonce)
        } catch {
            var response = gone(error, request: request)
            for field in extra where field.name == "Set-Cookie" { response.headers.add(name: field.name, value: field.value) }
            return response
        }
        return await start(session, provider: request.query("provider") ?? "", nonce: pair?.nonce ?? SecureRandom.token(), extra: extra)
    }

    /// `GET /connect.js`.
    func script(_ request: Request) -> Response { ConnectScript.response }

    /// Starts the sign-in at `provider` for the opened `session`: 302 to the provider with the flow cookie, or the end
    /// page with the error (posted to the session's origin).
    func start(_ session: PendingFlow, provider: String, nonce: String, extra: HTTPHeaders) async -> Response {
        if let entered = registry.provider(named: provider), Self.takesForm(entered) {
            return await showForm(session, provider: entered, nonce: nonce, extra: extra)
        }
        // A provider at each account's own host whose settings the session did not fix: the page asks for them first.
        if let named = registry.provider(named: provider), !named.accountSettings.isEmpty, session.settings.isEmpty,
            session.connect?.allows(named.name) == true
        {
            return await askSettings(session, provider: named, nonce: nonce, extra: extra, problem: nil)
        }
        do {
            let start = try await authorization.beginConnect(session, provider: provider, cookieNonce: nonce)
            logger.log(.info, "authorize started", [("provider", .string(provider)), ("mode", .string("connect_session"))])
            var headers = extra
            headers.add(name: "Location", value: start.authorizeURL)
            headers.add(
                name: "Set-Cookie",
                value: cookies.set(OAuthHandlers.flowCookie, start.state + "." + nonce, path: "/callback", maxAge: Int(flowTTL)))
            return Response(status: .found, headers: headers)
        } catch {
            logger.log(.info, "connect session failed", [("error", .string(error.code))])
            return end(session, state: nil, result: .failure(error), extra: extra)
        }
    }

    /// The end page for a flow started from `session` (or the session itself), posting the outcome to its origin.
    func end(_ session: PendingFlow, state: String?, result: Result<Account, BrokerError>, extra: HTTPHeaders) -> Response {
        let (page, status) = ConnectEndPage.outcome(
            of: session, state: state, result: result, registry: registry, appearance: appearance)
        return page.response(status, extra: extra)
    }

    /// A session that cannot be run: a page saying so, which tells the opener `expired` when the page that opened it
    /// is on a front-end origin (it says so in `opener_origin`; nothing else is posted, to nobody else).
    func gone(_ error: BrokerError, request: Request) -> Response {
        guard request.wantsHTML else { return error.response }
        let origin = request.query("opener_origin").flatMap { claimed in origins.first { ExactKey.same($0, claimed) } }
        guard case .connectSessionGone = error else {
            let page = ConnectEndPage(
                status: .failed, state: nil, error: error.code, message: HTMLPage.explanation(error), origin: origin, returnTo: nil,
                appearance: appearance)
            return page.response(error.status)
        }
        let page = ConnectEndPage(
            status: .failed, state: nil, error: "expired", message: error.message, origin: origin, returnTo: nil, appearance: appearance)
        return page.response(error.status)
    }

    // MARK: The request body

    /// The request's JSON object; an empty body is an empty object.
    static func jsonObject(_ request: Request) throws -> [String: Any] {
        guard !request.body.isEmpty else { return [:] }
        guard (request.headers["Content-Type"] ?? "").lowercased().hasPrefix("application/json") else {
            throw BrokerError.badRequest("The body must be JSON (Content-Type: application/json)")
        }
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(request.body)) else {
            throw BrokerError.badRequest("The body is not valid JSON")
        }
        guard let object = parsed as? [String: Any] else { throw BrokerError.badRequest("The body must be a JSON object") }
        return object
    }

    /// A string member, nil when absent or null; 400 naming it when it is something else or empty.
    static func string(_ body: [String: Any], _ name: String) throws(BrokerError) -> String? {
        guard let value = body[name], !(value is NSNull) else { return nil }
        guard let text = value as? String, !text.isEmpty, text.utf8.count <= 2048 else {
            throw .badRequest("\(name) must be a non-empty string")
        }
        return text
    }

    /// An array of strings, nil when absent or null.
    static func strings(_ body: [String: Any], _ name: String) throws(BrokerError) -> [String]? {
        guard let value = body[name], !(value is NSNull) else { return nil }
        guard let items = value as? [Any], items.count <= 256, items.allSatisfy({ ($0 as? String).map { !$0.isEmpty } ?? false }) else {
            throw .badRequest("\(name) must be an array of non-empty strings")
        }
        return items.compactMap { $0 as? String }
    }

    /// `scopes`: an array of scope tokens, or one string of them separated by spaces (RFC 6749 §3.3).
    static func scopes(_ body: [String: Any]) throws(BrokerError) -> [String]? {
        let scopes: [String]
        if let text = body["scopes"] as? String {
            scopes = text.split(separator: " ").map(String.init)
        } else if let list = try strings(body, "scopes") {
            scopes = list
        } else {
            return nil
        }
        return try Scopes.validated(scopes)
    }
}
