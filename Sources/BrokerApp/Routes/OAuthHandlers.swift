import BrokerCore
import BrokerCrypto
import BrokerHTTP
import Foundation

/// The OAuth surface: `/authorize`, `/callback`, `/flows/{state}`, `/account`, `/accounts`, `/account/refresh`, `/providers`.
///
/// Turns requests into calls on the core services and their results or errors into
/// responses; decides who may see which account (API key or this browser's session).
final class OAuthHandlers: Sendable {
    let authorization: AuthorizationService
    let accounts: AccountService
    let registry: ProviderRegistry
    let access: AccessControl
    let cookies: CookieHeader
    /// The title, colours and public path of the error pages browsers get.
    let appearance: PageAppearance
    let flowTTL: Double
    let logger: BrokerLogger
    /// Where token hand-outs, deletions and finished flows are recorded.
    let audit: AuditTrail
    let now: @Sendable () -> Date
    /// Signs and checks the cursors of `GET /accounts`.
    let cursors: ListingCursor
    /// `BROKER_PUBLIC_URL`'s origin (`https://broker.example.com`), as a browser sends it in `Origin`.
    let publicOrigin: String
    /// The parts of `GET /account`'s body without secrets, by account (what the inline path of reads renders once).
    let renderings = AccountRenderCache()
    /// The account store, when it keeps the renderings beside its accounts (the file store).
    let memos: (any AccountMemoReading)?

    /// The flow cookie: `<state>.<nonce>`; the flow stores SHA-256(nonce), binding it to this browser.
    static let flowCookie = "tb_flow"

    init(
        authorization: AuthorizationService, accounts: AccountService, registry: ProviderRegistry, access: AccessControl,
        cookies: CookieHeader, appearance: PageAppearance = .standard, flowTTL: Double, logger: BrokerLogger,
        audit: AuditTrail? = nil, now: @escaping @Sendable () -> Date
    ) {
        self.audit = audit ?? AuditTrail(logger: logger, file: nil)
        self.authorization = authorization
        self.accounts = accounts
        memos = accounts.immediateReader as? any AccountMemoReading
        self.registry = registry
        self.access = access
        self.cookies = cookies
        self.appearance = appearance
        self.flowTTL = flowTTL
        self.logger = logger
        self.now = now
        cursors = ListingCursor(secret: access.cookieSecret)
        publicOrigin = Self.origin(of: authorization.redirectURI)
    }

    /// `GET /authorize?provider=P[&return_to=URL]`: 302 to the provider, flow cookie set.
    ///
    /// An end user or tags in the query are refused (400 naming the field): only the API key may say whom an account belongs to.
    func authorizeBrowser(_ request: Request) async -> Response {
        let nonce = SecureRandom.token()
        do {
            try OwnerParameters.refuseInBrowserFlow(request)
            try StrictInput.query(request, allowed: ["provider", "return_to", "scopes"], orSettings: ())
            guard let provider = request.query("provider"), !provider.isEmpty else {
                throw BrokerError.badRequest("The provider query parameter is required.")
            }
            let scopes = try request.query("scopes").map { text throws(BrokerError) in try Scopes.validated(text: text) }
            let settings = try SettingsParameters.from(request.queryItems)
            let start = try await authorization.begin(
                provider: provider, returnTo: request.query("return_to"),
                binding: AuthorizationService.binding(forCookieNonce: nonce), scopes: scopes, settings: settings)
            logger.log(.info, "authorize started", [("provider", .string(provider)), ("mode", .string("browser"))])
            var headers = Self.noStore()
            headers.add(name: "Location", value: start.authorizeURL)
            headers.add(
                name: "Set-Cookie",
                value: cookies.set(
                    Self.flowCookie, start.state + "." + nonce,
                    path: "/callback", maxAge: Int(flowTTL)))
            return Response(status: .found, headers: headers)
        } catch {
            return failure(error, event: "authorize failed", negotiatingFor: request)
        }
    }

    /// `POST /authorize` (API key): for back ends that drive the browser themselves.
    ///
    /// Optional `end_user_id`, `end_user_email`, `end_user_name` and tags (a JSON
    /// `tags` object, or repeated `tag=key:value`) are checked before the flow
    /// starts and stored with the account it creates or updates.
    func authorizeAPI(_ request: Request) async -> Response {
        let form = RequestForm(request)
        do {
            let caller = try access.authorize(request, .connect)
            if form.bodyIsNotJSON { throw BrokerError.badRequest("The body is not a JSON object, though Content-Type says JSON") }
            try StrictInput.fields(
                form.namesBesideSettings,
                allowed: [
                    "provider", "return_to", "end_user_id", "end_user_email", "end_user_name", "tags", "tag", "scopes", "settings",
                ])
            guard let provider = form["provider"], !provider.isEmpty else {
                throw BrokerError.badRequest("The provider field is required.")
            }
            let owner = try OwnerParameters.owner(form)
            try caller.grant.require(provider: registry.provider(named: provider)?.name ?? provider)
            try caller.grant.require(endUser: owner.endUser?.id)
            let scopes = try form.scopes()
            let start = try await authorization.begin(
                provider: provider, returnTo: form["return_to"], binding: "api", endUser: owner.endUser, tags: owner.tags,
                scopes: scopes, settings: try form.settings())
            logger.log(.info, "authorize started", [("provider", .string(provider)), ("mode", .string("api"))])
            return Response.json(
                .ok,
                AccountJSON.object([
                    ("authorize_url", JSONString.quote(start.authorizeURL)), ("state", JSONString.quote(start.state)),
                    ("expires_at", AccountJSON.date(start.expiresAt)),
                ]), headers: Self.noStore())
        } catch {
            return failure(error, event: "authorize failed")
        }
    }

    /// `GET /callback`: checks the state and its binding, exchanges, stores, remembers the account in the session.
    func callback(_ request: Request) async -> Response {
        var query: [String: String] = [:]
        for item in request.queryItems where query[item.name] == nil { query[item.name] = item.value }
        // The query goes to the provider's exchange as it came; the flow is found by the state's own part.
        let flow = request.cookies[Self.flowCookie].flatMap(Self.splitFlowCookie)
        guard let state = query["state"].map(AuthorizationService.flowState(callbackState:)) ?? flow?.state, !state.isEmpty else {
            return failure(BrokerError.invalidState, event: "callback failed", negotiatingFor: request)
        }
        let proof = flow?.state == state ? flow?.nonce : nil
        var headers = Self.noStore()
        headers.add(name: "Set-Cookie", value: cookies.clear(Self.flowCookie, path: "/callback"))
        let completion = await authorization.completion(state: state, bindingProof: proof, query: query)
        // A connect session's popup ends on the page that posts the outcome; an API client gets JSON as for any flow.
        if let flow = completion.flow, flow.connect != nil, request.wantsHTML {
            return connectEnd(completion, flow: flow, query: query, request: request, headers: headers)
        }
        do {
            let account = try completion.result.get()
            let returnTo = completion.flow?.returnTo
            logger.log(.info, "callback ok", [("provider", .string(account.provider)), ("account", .string(account.id))])
            audit.record(.flowCompleted, account, caller: AccessControl.browser, request: request)
            // Only a flow this browser started gives it the account: when a back end started it (`POST /authorize`,
            // a connect session), the back end reads the token, and the browser that finished it may not.
            if let flow = completion.flow, flow.binding != AuthorizationService.apiBinding, flow.connect == nil {
                var session = access.session(request) ?? SessionCookie(accountIDs: [], issuedAt: 0)
                session.insert(account.id)
                session.issuedAt = Int(now().timeIntervalSince1970)
                headers.add(name: "Set-Cookie", value: access.sessionCookieHeader(session, cookies: cookies))
            }
            if let returnTo {
                // The state beside the account: the back end that started the flow matches the two itself
                // (GET /flows/{state}), rather than trusting an account id the browser could have changed.
                let separator = returnTo.contains("?") ? "&" : "?"
                headers.add(
                    name: "Location",
                    value: returnTo + separator + "account=" + PercentEncoding.rfc3986(account.id) + "&state="
                        + PercentEncoding.rfc3986(state))
                return Response(status: .found, headers: headers)
            }
            if request.wantsHTML {
                // A person in a browser: back to the connect page, which says once what happened.
                headers.add(
                    name: "Set-Cookie",
                    value: ConnectPageNotice(kind: .connected, accountID: account.id)
                        .setCookie(secret: access.cookieSecret, cookies: cookies))
                headers.add(name: "Location", value: appearance.home)
                return Response(status: .seeOther, headers: headers)
            }
            headers.add(name: "Vary", value: "Accept")
            return Response.json(.ok, AccountJSON.summary(account, status: accounts.reportedStatus(of: account)), headers: headers)
        } catch {
            var response = failure(error, event: "callback failed", negotiatingFor: request)
            // RFC 9700 §4.2.4: the callback URL holds a code; an error page must not pass it on as a Referer either.
            for field in headers.fields
            where field.name == "Set-Cookie"
                || (field.name == "Referrer-Policy" && !response.headers.contains("Referrer-Policy"))
            {
                response.headers.add(name: field.name, value: field.value)
            }
            return response
        }
    }

    /// The callback of a flow started from a connect session: the end page that posts the outcome to the session's
    /// origin. The browser's session cookie is left as it was: the back end that made the session reads the token.
    private func connectEnd(
        _ completion: FlowCompletion, flow: PendingFlow, query: [String: String], request: Request, headers: HTTPHeaders
    )
        -> Response
    {
        switch completion.result {
        case .success(let account):
            logger.log(.info, "callback ok", [("provider", .string(account.provider)), ("account", .string(account.id))])
            audit.record(.flowCompleted, account, caller: AccessControl.browser, request: request)
        case .failure(let error):
            _ = failure(error, event: "callback failed")
        }
        // The provider's own error code (RFC 6749 §4.1.2.1) when it sent one, for the front end to tell cases apart.
        var providerError: String?
        if case .failure(.accessDenied) = completion.result, let code = query["error"],
            (1...64).contains(code.utf8.count), code.utf8.allSatisfy({ (0x61...0x7A).contains($0) || $0 == 0x5F })
        {
            providerError = code
        }
        let (page, status) = ConnectEndPage.outcome(
            of: flow, state: flow.state, result: completion.result, registry: registry, appearance: appearance,
            providerError: providerError)
        var extra = headers
        // RFC 9110 §12.5.5: an API client gets JSON from the same URL.
        extra.add(name: "Vary", value: "Accept")
        return page.response(status, extra: extra)
    }

    /// `GET /account?id=ID` or `?provider=P&uid=U`: the token, for the API key or the owning browser; refreshed first when due.
    ///
    /// When the refresh failed upstream and the account now backs off, the
    /// error answer carries `Retry-After` with the seconds until the broker will
    /// try the provider again (RFC 9110 §10.2.3); asking sooner gets the same error.
    func account(_ request: Request) async -> Response {
        var authorizedID: String?
        var storedID: AccountID?
        var caller = AccessControl.browser
        var scope: String?
        do {
            let raw = try Self.accountID(request, alsoAllowing: ["scopes"])
            let who = try access.require(request, mayUse: raw, scope: .tokensRead)
            caller = who.name
            scope = who.audited(.tokensRead)
            authorizedID = raw
            let asked = try request.query("scopes").map { text throws(BrokerError) in try Scopes.validated(text: text) }
            let id = try AccountID.stored(raw)
            storedID = id
            try await checkEndUser(of: id, for: who)
            let account = try await accounts.account(id: id)
            try who.grant.require(account: account)
            if let asked {
                let missing = Scopes.missing(asked, from: account.grantedScopes ?? [])
                if !missing.isEmpty {
                    audit.record(.tokenRead, account, caller: caller, request: request, outcome: "insufficient_scope", scope: scope)
                    return try await stepUp(account, asked: asked, missing: missing, request: request)
                }
            }
            audit.record(.tokenRead, account, caller: caller, request: request, scope: scope)
            return Self.corsTokenResponse(
                AccountJSON.fullBytes(account, status: accounts.reportedStatus(of: account), entered: holdsEntered(account)))
        } catch {
            var response = failure(error, event: nil)
            // An authorised read that failed (upstream, reauthorization) is recorded too: someone asked for the token.
            if let id = authorizedID {
                audit.record(.tokenRead, accountID: id, caller: caller, request: request, outcome: error.code, scope: scope)
            }
            if let id = storedID, error.isUpstreamFailure,
                let seconds = await accounts.retryAfter(accountID: id)
            {
                response.headers.add(name: "Retry-After", value: String(seconds))
            }
            return response
        }
    }

    /// `403 insufficient_scope` for an account whose granted scopes lack `missing` (RFC 6750 §3.1's code): the body
    /// names them and, for an API key that may start flows, carries the `authorize_url` and `state` of a step-up flow
    /// asking for the granted scopes and the missing ones. Completing it updates this same account (the sign-in must
    /// come back as it; its end user and tags stay); a grant lacking any of them fails the flow and changes nothing.
    private func stepUp(_ account: Account, asked: [String], missing: [String], request: Request) async throws(BrokerError)
        -> Response
    {
        let granted = account.grantedScopes ?? []
        var fields: [(String, String)] = [
            ("error", JSONString.quote("insufficient_scope")),
            ("message", JSONString.quote(BrokerError.insufficientScope(missing: missing).message)),
            ("account_id", JSONString.quote(account.id)),
            ("missing_scopes", Self.jsonArray(missing)),
            ("granted_scopes", account.grantedScopes.map(Self.jsonArray) ?? "null"),
        ]
        // Only a key that may connect accounts (and this provider) gets a flow; a browser session learns what is missing.
        if let starter = try? access.authorize(request, .connect), (try? starter.grant.require(provider: account.provider)) != nil {
            try authorization.checkAllowed(asked, provider: account.provider)
            let union = Scopes.union(granted, asked)
            let start = try await authorization.begin(
                provider: account.provider, returnTo: nil, binding: AuthorizationService.apiBinding, scopes: union,
                stepUp: account.accountID, settings: account.settings)
            logger.log(.info, "authorize started", [("provider", .string(account.provider)), ("mode", .string("step_up"))])
            fields += [
                ("scopes", Self.jsonArray(union)), ("authorize_url", JSONString.quote(start.authorizeURL)),
                ("state", JSONString.quote(start.state)), ("expires_at", AccountJSON.date(start.expiresAt)),
            ]
        }
        var headers = Self.noStore()
        // RFC 6750 §3.1: insufficient_scope with the scope the request needs.
        headers.add(
            name: "WWW-Authenticate",
            value:
                "Bearer realm=\"token-broker\", error=\"insufficient_scope\", scope=\"\(Scopes.union(granted, asked).joined(separator: " "))\""
        )
        return Response.json(.forbidden, AccountJSON.object(fields), headers: headers)
    }

    /// A JSON array of strings.
    static func jsonArray(_ values: [String]) -> String {
        "[" + values.map(JSONString.quote).joined(separator: ",") + "]"
    }

    /// The inline path of `GET /account`: a valid, in-memory account for an authorised caller,
    /// answered on the worker queue; nil sends the request down the asynchronous path.
    func accountNow(_ request: Request) -> Response? {
        guard let raw = try? Self.accountID(request), let who = try? access.require(request, mayUse: raw, scope: .tokensRead),
            let id = AccountID(raw)
        else { return nil }
        // The usual read with the file store: the body kept beside this very version of the account, found and checked
        // where the store holds the account, without copying it out. Only an account that is not entered credentials
        // ever gets one (below), and an account stays so until it is written, which drops the entry.
        if let memos, let answer = renderings.keptBeside(id, in: memos), accounts.servesNow(answer.held),
            (try? who.grant.require(account: answer.held)) != nil
        {
            answer.withOpening { json, text in
                audit.recordTokenRead(
                    openingJSON: json, openingText: text, caller: who.auditField, request: request, scope: who.audited(.tokensRead))
            }
            return Self.corsTokenResponse(answer.body)
        }
        // The account as the store holds it (``HeldAccount``): a whole ``Account`` is built only for entered credentials.
        guard let held = accounts.heldNow(id: id), (try? who.grant.require(account: held)) != nil else { return nil }
        // ``AccountService/heldNow(id:)`` hands out only an account active and unexpired at its check, which
        // ``AccountService/reportedStatus(of:)`` reports as `active` whatever its provider.
        if holdsEntered(accessToken: held.accessToken, provider: held.provider) {
            let account = held.account
            // The store found the account by these bytes, so they are its id.
            audit.record(.tokenRead, account, id: id.string, caller: who.name, request: request, scope: who.audited(.tokensRead))
            return Self.corsTokenResponse(AccountJSON.fullBytes(account, status: AccountStatus.active.rawValue, entered: true))
        }
        // A store that keeps memos (the file store) keeps the whole answer beside this version of the account, for
        // the next reads to find above.
        if let reader = accounts.immediateReader, reader.keepsMemos {
            let answer = renderings.answer(for: held, id: id, keepingIn: reader)
            answer.withOpening { json, text in
                audit.recordTokenRead(
                    openingJSON: json, openingText: text, caller: who.auditField, request: request, scope: who.audited(.tokensRead))
            }
            return Self.corsTokenResponse(answer.body)
        }
        // Else the parts without secrets kept for this version of the account and the audit event's fields about it
        // (`event` to `end_user`): only what they do not hold (the token and status, the caller and the request) is
        // written.
        let rendering = renderings.rendering(of: held, id: id.string)
        let body = rendering.withBytes { head, middle, tail, json, text in
            audit.recordTokenRead(
                openingJSON: json, openingText: text, caller: who.auditField, request: request, scope: who.audited(.tokensRead))
            return AccountJSON.fullBytes(held, quotedStatus: #""active""#, head: head, middle: middle, tail: tail)
        }
        return Self.corsTokenResponse(body)
    }

    /// `GET /accounts`: summaries without secrets, one page at a time; every account for the API key,
    /// the accounts this browser connected for its session cookie (without an `Authorization` field).
    ///
    /// Filters `provider`, `end_user_id`, `status` and repeated `tag=key:value`
    /// (all must hold); `limit` (1–1000, default 100) and the `cursor` of the
    /// previous answer's `next_cursor`. Pages follow the id order, so accounts
    /// added meanwhile skip or repeat no other.
    func list(_ request: Request) async -> Response {
        let session = request.headers["Authorization"] == nil ? access.session(request) : nil
        do {
            let caller = session == nil ? try access.authorize(request, .accountsRead) : .browser
            try StrictInput.query(request, allowed: ["provider", "end_user_id", "status", "tag", "limit", "cursor"])
            let listing = try OwnerParameters.listing(request)
            if let provider = listing.filter.provider, registry.provider(named: provider) == nil {
                throw BrokerError.unknownProvider(provider)
            }
            // A limited key lists only within its limits, which its filters must say.
            if caller.grant.providers != nil {
                guard let provider = listing.filter.provider else {
                    throw BrokerError.insufficientPermissions("This API key is limited to some providers: filter by provider.")
                }
                try caller.grant.require(provider: provider)
            }
            if caller.grant.endUserPrefix != nil { try caller.grant.require(endUser: listing.filter.endUserID) }
            let scope = ListingCursor.scope(listing, session: session != nil)
            var after: AccountID?
            if let cursor = listing.cursor {
                // A cursor this broker signed holds a stored account's id, which always has its `:`.
                guard let id = cursors.after(cursor, scope: scope).flatMap({ AccountID($0) }) else {
                    throw BrokerError.badRequest("cursor is not one this broker gave out for these filters.")
                }
                after = id
            }
            let page =
                if let session {
                    try await accounts.page(
                        ids: session.accountIDs.compactMap { AccountID($0) }, after: after, limit: listing.limit, filter: listing.filter,
                        status: listing.status)
                } else {
                    try await accounts.page(after: after, limit: listing.limit, filter: listing.filter, status: listing.status)
                }
            let next = page.nextAfter.map { JSONString.quote(cursors.cursor(after: $0.string, scope: scope)) } ?? "null"
            let body =
                "{\"accounts\":["
                + page.accounts.map { AccountJSON.summary($0, status: accounts.reportedStatus(of: $0)) }.joined(separator: ",")
                + "],\"next_cursor\":" + next + "}"
            return Response.json(.ok, body, headers: Self.noStore())
        } catch {
            return failure(error, event: nil)
        }
    }

    /// `POST /account/refresh?id=ID`: refreshes the token now, due or not, and answers the account with its new token, as `GET /account` does.
    ///
    /// The API key may refresh any account; a browser only one its session
    /// cookie lists, and only from a page allowed to ask (see
    /// ``browserMayPost(_:cors:)``), since a forced refresh calls the provider.
    /// A second ask within ``RefreshCoordinator/Policy/forcedRefreshReuse`` of
    /// the last refresh gets that refresh's token without another provider call.
    /// Like a read, it keeps to the refresh backoff: while the account backs
    /// off, the last try's error comes back at once with `Retry-After`.
    func refresh(_ request: Request, cors: CORSPolicy) async -> Response {
        var accountID: String?
        var storedID: AccountID?
        var caller = AccessControl.browser
        var scope: String?
        do {
            let id = try Self.accountID(request, alsoAllowing: ["csrf"])
            let who = try access.require(request, mayUse: id, scope: .tokensRead)
            caller = who.name
            scope = who.audited(.tokensRead)
            if request.headers["Authorization"] == nil, !browserMayPost(request, cors: cors) {
                logger.log(.warning, "refresh refused", [("account", .string(id)), ("reason", .string("csrf"))])
                return Response.error(
                    .forbidden, code: "forbidden",
                    message: "A browser may force a refresh only from a listed front-end origin or with the connect page's csrf token.",
                    headers: Self.noStore())
            }
            accountID = id
            let typed = try AccountID.stored(id)
            storedID = typed
            try await checkEndUser(of: typed, for: who)
            let account = try await accounts.refreshNow(id: typed)
            logger.log(.info, "refresh requested", [("provider", .string(account.provider)), ("account", .string(id))])
            audit.record(.tokenRefreshed, account, caller: caller, request: request, scope: scope)
            return Self.corsTokenResponse(
                AccountJSON.fullBytes(account, status: accounts.reportedStatus(of: account), entered: holdsEntered(account)))
        } catch {
            var response = failure(error, event: nil)
            if let id = accountID {
                audit.record(.tokenRefreshed, accountID: id, caller: caller, request: request, outcome: error.code, scope: scope)
            }
            if let id = storedID, error.isUpstreamFailure, let seconds = await accounts.retryAfter(accountID: id) {
                response.headers.add(name: "Retry-After", value: String(seconds))
            }
            return response
        }
    }

    /// Whether a browser's POST comes from a page allowed to make it: its `Origin` is a listed front-end origin
    /// (`BROKER_CORS_ORIGINS`), or it carries the connect page's anti-forgery token for its session as `csrf`
    /// (a form field or a query parameter).
    ///
    /// The session cookie alone is not enough: it is `SameSite=Lax`, which
    /// keeps it off cross-site POSTs but not off those of another origin on the
    /// same site, and a plain form POST needs no CORS preflight. The token is
    /// the signed double-submit the connect page's forms use (OWASP CSRF
    /// Prevention Cheat Sheet); a listed origin is trusted as it is for reads.
    func browserMayPost(_ request: Request, cors: CORSPolicy) -> Bool {
        if cors.allowedOrigin(request) != nil { return true }
        // The broker's own pages (BROKER_PUBLIC_URL's origin): a same-origin POST, which no other page can forge.
        if let origin = request.headers["Origin"], origin == publicOrigin { return true }
        let token = RequestForm(request)["csrf"] ?? request.query("csrf")
        return ConnectPageCSRF(secret: access.cookieSecret).verify(token, session: request.cookies[SessionCookie.name])
    }

    /// `DELETE /account?id=ID`: revokes at the provider where it can, always deletes locally.
    func delete(_ request: Request) async -> Response {
        do {
            let id = try Self.accountID(request)
            let who = try access.require(request, mayUse: id, scope: .accountsWrite)
            let caller = who.name
            try await checkEndUser(of: try AccountID.stored(id), for: who)
            let result = try await accounts.delete(id: try AccountID.stored(id))
            audit.recordDeletion(result, caller: caller, request: request, scope: who.audited(.accountsWrite))
            var fields: [(String, LogValue)] = [("account", .string(id))]
            if let revoked = result.revoked { fields.append(("revoked", .bool(revoked))) }
            if let reason = result.revokeError { fields.append(("revoke_error", .string(reason))) }
            logger.log(result.revokeError == nil ? .info : .warning, "account deleted", fields)
            guard let reason = result.revokeError else { return Response(status: .noContent, headers: Self.noStore()) }
            return Response.json(
                .ok,
                AccountJSON.object([
                    ("id", JSONString.quote(id)), ("deleted", "true"), ("revoked", "false"),
                    ("revoke_error", JSONString.quote(reason)),
                ]), headers: Self.noStore())
        } catch {
            return failure(error, event: nil)
        }
    }

    /// `GET /providers`: names, kinds, whether each is configured (and what it lacks) and available (and why not).
    func providers(_ request: Request) -> Response {
        let items = registry.all.map { p in
            let unavailable = Self.unavailability(of: p, in: registry)
            // What a form for an entered credential asks for; never a value.
            let fields = p.credentials.map { scheme in
                "["
                    + scheme.fields.map {
                        AccountJSON.object([("name", JSONString.quote($0.name)), ("description", JSONString.quote($0.description))])
                    }.joined(separator: ",") + "]"
            }
            var members: [(String, String)] = [
                ("name", JSONString.quote(p.name)), ("display_name", JSONString.quote(p.displayedName)),
                ("icon_url", p.iconURL.map(JSONString.quote) ?? "null"), ("kind", JSONString.quote(p.kind.rawValue)),
            ]
            if let fields { members.append(("fields", fields)) }
            if !p.accountSettings.isEmpty {
                // What each account gives for the provider's URLs (``AccountSetting``), and whether it lands in a host.
                let inHost = p.settingsInHost
                let listed = p.accountSettings.map { setting in
                    AccountJSON.object([
                        ("name", JSONString.quote(setting.name)), ("description", JSONString.quote(setting.description)),
                        ("pattern", setting.pattern.map(JSONString.quote) ?? "null"),
                        ("in_host", inHost.contains(setting.name) ? "true" : "false"),
                    ])
                }
                members.append(("account_settings", "[" + listed.joined(separator: ",") + "]"))
            }
            members += [
                ("configured", p.isConfigured ? "true" : "false"),
                ("missing", "[" + p.missingSettings.map(JSONString.quote).joined(separator: ",") + "]"),
                ("grants", "[" + p.grants.listed.map(JSONString.quote).joined(separator: ",") + "]"),
                ("available", p.isConfigured && unavailable == nil ? "true" : "false"),
                ("reason", unavailable.map(JSONString.quote) ?? "null"),
            ]
            return AccountJSON.object(members)
        }
        return Response.json(.ok, "{\"providers\":[" + items.joined(separator: ",") + "]}")
    }

    // MARK: Helpers

    /// Whether `account`'s provider takes entered credentials, so that its `access_token` holds their fields.
    func holdsEntered(_ account: Account) -> Bool {
        holdsEntered(accessToken: account.accessToken, provider: account.provider)
    }

    /// ``holdsEntered(_:)`` of an account with this token at this provider.
    func holdsEntered(accessToken: Secret, provider: String) -> Bool {
        // Only a stored JSON object can be entered credentials; any other token is answered without looking up its
        // provider, whose configuration the registry hands out as a copy (on every read of GET /account).
        CredentialValues.mayBeStored(accessToken) && (registry.provider(named: provider)?.kind.holdsEnteredCredentials ?? false)
    }

    /// `scheme://host[:port]` of `url`, lowercased, without a default port (RFC 6454 §6.1), or "" when it has none.
    static func origin(of url: String) -> String {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), let host = parts.host?.lowercased(),
            !host.isEmpty
        else { return "" }
        let port = parts.port.flatMap { (scheme == "https" && $0 == 443) || (scheme == "http" && $0 == 80) ? nil : $0 }
        return scheme + "://" + host + (port.map { ":\($0)" } ?? "")
    }

    /// For a key limited to some end users: refuses an account stored for another (or for none), before anything is
    /// done with it. Nothing to read for other callers.
    func checkEndUser(of id: AccountID, for caller: AccessControl.Caller) async throws(BrokerError) {
        try await caller.requireStored(id, in: accounts)
    }

    /// Why configured provider `p` cannot start a sign-in now (an OpenID provider without its discovery document), or nil.
    static func unavailability(of p: ProviderConfiguration, in registry: ProviderRegistry) -> String? {
        if p.kind == .mcp {
            // A remote MCP server: its authorization server and the broker's client there are discovered.
            return switch registry.mcp.state(of: p.name) {
            case nil, .loaded: nil
            case .pending: "discovery pending"
            case .failed(let reason): "discovery failed: " + reason
            }
        }
        return switch registry.discovery.state(of: p.name) {
        case nil, .loaded: nil
        case .pending: "discovery pending"
        case .failed(let reason): "discovery failed: " + reason
        }
    }

    /// The error response; with `negotiatingFor`, a browser gets a page in plain words instead of JSON.
    func failure(_ error: any Error, event: String?, negotiatingFor request: Request? = nil) -> Response {
        let brokerError = (error as? BrokerError) ?? .badRequest("The request could not be handled.")
        if let event {
            var fields: [(String, LogValue)] = [("error", .string(brokerError.code)), ("reason", .string(brokerError.message))]
            if let detail = brokerError.logDetail { fields.append(("cause", .string(detail))) }
            logger.log(.warning, event, fields)
        }
        guard let request else { return brokerError.response }
        // RFC 9110 §12.5.5: the answer depends on Accept, so shared caches must key on it.
        var response =
            request.wantsHTML
            ? HTMLPage.failure(brokerError, during: .connect, appearance: appearance).response(brokerError.status)
            : brokerError.response
        response.headers.add(name: "Vary", value: "Accept")
        return response
    }

    static func splitFlowCookie(_ value: String) -> (state: String, nonce: String)? {
        guard let dot = value.firstIndex(of: ".") else { return nil }
        return (String(value[..<dot]), String(value[value.index(after: dot)...]))
    }

    /// The query parameters that name an account.
    private static let accountNaming: [StaticString] = ["id", "provider", "uid"]

    static func accountID(_ request: Request, alsoAllowing extra: [StaticString] = []) throws(BrokerError) -> String {
        if let query = request.head.query, let id = plainID(query) { return id }
        try StrictInput.query(request, allowed: extra.isEmpty ? accountNaming : accountNaming + extra)
        try StrictInput.accountNaming(request)
        if let id = request.query("id"), !id.isEmpty { return id }
        if let provider = request.query("provider"), let uid = request.query("uid"), !provider.isEmpty, !uid.isEmpty {
            return AccountID(provider: provider, uid: uid).string
        }
        throw .badRequest("Give the account as id=PROVIDER:UID or as provider=P&uid=U.")
    }

    /// The value of a query that is `id=VALUE` alone, with nothing to decode (no `%`, `+` or non-ASCII byte) and no
    /// `&`: every read of `GET /account` from a client that names accounts by id. What the checks and the lookup of
    /// ``accountID(_:alsoAllowing:)`` would find for it, without walking the query three times; nil for any other.
    private static func plainID(_ query: String) -> String? {
        var query = query
        return query.withUTF8 { bytes -> String? in
            guard bytes.count > 3, bytes[0] == UInt8(ascii: "i"), bytes[1] == UInt8(ascii: "d"), bytes[2] == UInt8(ascii: "=")
            else { return nil }
            let value = UnsafeBufferPointer(rebasing: bytes[3...])
            for byte in value where byte >= 0x80 || byte == UInt8(ascii: "%") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "&") {
                return nil
            }
            // ASCII (checked above): copied into a string without a UTF-8 check, inline when up to 15 bytes.
            return String(unsafeUninitializedCapacity: value.count) { $0.initialize(fromContentsOf: value) }
        }
    }

    /// 200 with a JSON body that carries a token: never cached (RFC 6749 §5.1), for a route ``CORSPolicy`` does not
    /// decorate (`GET /app-token`).
    ///
    /// The fields are one list shared by every such answer, written out once (``FixedHeaders``): an
    /// answer neither builds nor frees a list of its own, and its head copies their bytes in one piece.
    static func tokenResponse(_ body: [UInt8]) -> Response {
        Response(status: .ok, fixed: tokenHeaders, body: body)
    }

    /// ``tokenResponse(_:)`` for a route whose answers ``CORSPolicy/decorate(_:for:)`` decorates (`GET /account`,
    /// `POST /account/refresh`): the shared fields end with the `Vary: Origin` it puts on every answer, so it leaves
    /// them as they are unless the request comes from a listed origin. Building, extending and freeing a list of
    /// four fields on every read cost about as much as the rest of the answer's fields.
    @inline(__always)
    static func corsTokenResponse(_ body: [UInt8]) -> Response {
        Response(status: .ok, fixed: corsTokenHeaders, body: body)
    }

    private static let tokenHeaders = FixedHeaders([
        ("Cache-Control", "no-store"), ("Pragma", "no-cache"), ("Referrer-Policy", "no-referrer"), ("Content-Type", "application/json"),
    ])

    private static let corsTokenHeaders = FixedHeaders([
        ("Cache-Control", "no-store"), ("Pragma", "no-cache"), ("Referrer-Policy", "no-referrer"), ("Content-Type", "application/json"),
        ("Vary", "Origin"),
    ])

    static func noStore() -> HTTPHeaders { noStoreHeaders }

    private static let noStoreHeaders =
        HTTPHeaders([("Cache-Control", "no-store"), ("Pragma", "no-cache"), ("Referrer-Policy", "no-referrer")])
}
