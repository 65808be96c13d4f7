import BrokerCore
import BrokerHTTP
import Foundation

/// `GET /` (the connect page), `GET /disconnect` (the confirmation its Disconnect links lead to) and `POST /disconnect` (the confirmation's form).
///
/// The page lists the accounts of this browser's session cookie. Disconnect
/// first asks on a page of its own, whose form carries the anti-forgery token;
/// the POST needs that session and token, deletes the account through
/// `AccountService.delete` (which revokes it at the provider) and 303s back to the page.
final class ConnectPageHandlers: Sendable {
    /// Reads (with expiry decided by the clock) and deletes accounts.
    let accounts: AccountService
    /// The providers to offer.
    let registry: ProviderRegistry
    /// The session cookie and the secret that signs it, the notice and the CSRF token.
    let access: AccessControl
    /// Builds `Set-Cookie` values.
    let cookies: CookieHeader
    /// `BROKER_PUBLIC_URL`, where every sign-in returns.
    let publicURL: String
    /// The title, colours and public path of the pages.
    let appearance: PageAppearance
    /// Where refusals and deletions are logged, never with a token.
    let logger: BrokerLogger
    /// Where disconnections are recorded.
    let audit: AuditTrail
    /// The injected clock for status labels and the session's issue time.
    let now: @Sendable () -> Date

    /// Creates the handlers over the same services as the OAuth surface.
    init(
        accounts: AccountService, registry: ProviderRegistry, access: AccessControl, cookies: CookieHeader,
        publicURL: String, appearance: PageAppearance, logger: BrokerLogger, audit: AuditTrail? = nil,
        now: @escaping @Sendable () -> Date
    ) {
        self.audit = audit ?? AuditTrail(logger: logger, file: nil)
        self.accounts = accounts
        self.registry = registry
        self.access = access
        self.cookies = cookies
        self.publicURL = publicURL
        self.appearance = appearance
        self.logger = logger
        self.now = now
    }

    /// The anti-forgery tokens, keyed with the cookie secret.
    var csrf: ConnectPageCSRF { ConnectPageCSRF(secret: access.cookieSecret) }

    /// `GET /`: the providers and this browser's accounts; shows and clears a pending notice.
    func page(_ request: Request) async -> Response {
        let session = access.session(request)
        var items: [ConnectPage.AccountItem] = []
        for id in (session?.accountIDs ?? []).reversed() {
            let (provider, uid) = ConnectPage.split(id)
            do {
                let account = try await accounts.account(id: AccountID.stored(id))
                items.append(
                    ConnectPage.AccountItem(
                        id: id, provider: account.provider, uid: account.uid, screenName: account.screenName,
                        status: ConnectPageStatus.make(status: account.status, expiresAt: account.expiresAt, now: now()),
                        canReconnect: isConfigured(account.provider), iconURL: icon(of: account.provider)))
            } catch {
                if let status = ConnectPageStatus.make(refusal: error) {
                    items.append(
                        ConnectPage.AccountItem(
                            id: id, provider: provider, uid: uid, screenName: nil, status: status,
                            canReconnect: isConfigured(provider), iconURL: icon(of: provider)))
                } else if error != .notFound {
                    // Deleted elsewhere (notFound) just drops out of the list; anything else is a real failure.
                    logger.log(.warning, "connect page failed", [("error", .string(error.code))])
                    return HTMLPage.failure(error, during: .view, appearance: appearance).response(error.status)
                }
            }
        }
        var extra = HTTPHeaders()
        var notice: ConnectPageNotice?
        if let value = request.cookies[ConnectPageNotice.cookieName] {
            notice = ConnectPageNotice.decode(value, secret: access.cookieSecret)
            extra.add(name: "Set-Cookie", value: cookies.clear(ConnectPageNotice.cookieName, path: "/"))
        }
        let page = ConnectPage(
            // An app-token-only provider has no sign-in, so no Connect button.
            providers: registry.all.filter(\.offersSignIn).map {
                ConnectPage.ProviderItem(name: $0.name, displayName: $0.displayedName, iconURL: $0.iconURL)
            },
            accounts: items,
            displayNames: displayNames,
            notice: notice,
            // Under a path the broker is behind a proxy, whose Host it cannot judge; the hint is for direct visits.
            publicURLHint: appearance.basePath.isEmpty
                ? ConnectPage.publicURLHint(requestHost: request.headers["Host"], publicURL: publicURL) : nil,
            appearance: appearance)
        return page.page().response(.ok, extra: extra)
    }

    /// `GET /disconnect?id=ID`: the confirmation page, for an account this browser connected; 403 otherwise. Deletes nothing.
    func confirmDisconnect(_ request: Request) async -> Response {
        guard let cookie = request.cookies[SessionCookie.name], let session = access.session(request),
            let id = request.query("id"), session.holds(id)
        else {
            return refusal(request, "This browser did not connect that account, so it cannot disconnect it.")
        }
        let (provider, uid) = ConnectPage.split(id)
        // Named as the page names it; a read that fails (already deleted, expired) still lets the person confirm.
        let screenName = try? await accounts.account(id: AccountID.stored(id)).screenName
        let page = DisconnectConfirmation(
            accountID: id, providerName: displayNames[provider] ?? provider, who: screenName ?? uid,
            revokes: accounts.revokes(provider: provider), csrfToken: csrf.token(session: cookie), appearance: appearance)
        return page.page().response(.ok)
    }

    /// Every provider key the registry knows, with the name people see.
    var displayNames: [String: String] {
        Dictionary(registry.all.map { ($0.name, $0.displayedName) }, uniquingKeysWith: { a, _ in a })
    }

    /// The icon of `provider` when it is configured (the page's policy allows only the configured providers' icons).
    private func icon(of provider: String) -> String? {
        registry.provider(named: provider).flatMap { $0.isConfigured ? $0.iconURL : nil }
    }

    /// Whether `provider` exists, has every setting its kind needs and a sign-in, so Reconnect can work.
    private func isConfigured(_ provider: String) -> Bool {
        registry.provider(named: provider)?.offersSignIn ?? false
    }

    /// `POST /disconnect` with form fields `id` and `csrf`: 403 and nothing deleted unless both check out.
    func disconnect(_ request: Request) async -> Response {
        let form = RequestForm(request)
        guard let cookie = request.cookies[SessionCookie.name], var session = access.session(request),
            csrf.verify(form["csrf"], session: cookie)
        else {
            logger.log(.warning, "disconnect refused", [("reason", .string("csrf"))])
            return refusal(
                request,
                "This form is out of date or did not come from the connect page. "
                    + "Open the page again and retry.")
        }
        guard let id = form["id"], session.holds(id) else {
            logger.log(.warning, "disconnect refused", [("reason", .string("not_in_session"))])
            return refusal(request, "This browser did not connect that account, so it cannot disconnect it.")
        }
        var kind = ConnectPageNotice.Kind.disconnected
        do {
            let result = try await accounts.delete(id: AccountID.stored(id))
            audit.recordDeletion(result, caller: AccessControl.browser, request: request)
            var fields: [(String, LogValue)] = [("account", .string(id)), ("via", .string("connect page"))]
            if let revoked = result.revoked { fields.append(("revoked", .bool(revoked))) }
            if let reason = result.revokeError {
                fields.append(("revoke_error", .string(reason)))
                kind = .disconnectedUnrevoked
            }
            logger.log(result.revokeError == nil ? .info : .warning, "account deleted", fields)
        } catch {
            // Already gone (deleted through the API): dropping it from the session is all that is left.
            guard error == .notFound else {
                logger.log(.warning, "disconnect failed", [("account", .string(id)), ("error", .string(error.code))])
                return request.wantsHTML
                    ? HTMLPage.failure(error, during: .disconnect, appearance: appearance).response(error.status)
                    : error.response
            }
        }
        session.accountIDs.removeAll { ExactKey.same($0, id) }
        session.issuedAt = Int(now().timeIntervalSince1970)
        var headers = HTTPHeaders([("Cache-Control", "no-store"), ("Location", appearance.home)])
        headers.add(name: "Set-Cookie", value: access.sessionCookieHeader(session, cookies: cookies))
        headers.add(
            name: "Set-Cookie",
            value: ConnectPageNotice(kind: kind, accountID: id)
                .setCookie(secret: access.cookieSecret, cookies: cookies))
        // RFC 9110 §15.4.4: 303 makes the browser GET the page, so a reload never re-posts the form.
        return Response(status: .seeOther, headers: headers)
    }

    /// 403 with `message`, as a page for browsers and as `{"error":"forbidden"}` for others.
    private func refusal(_ request: Request, _ message: String) -> Response {
        guard request.wantsHTML else {
            return Response.error(.forbidden, code: "forbidden", message: message, headers: HTTPHeaders([("Cache-Control", "no-store")]))
        }
        let body = """
            <h1>The account was not disconnected</h1>
            <p class="notice error" role="alert">\(HTMLPage.escape(message))</p>
            <p>\(HTMLPage.backLink(appearance))</p>
            """
        return HTMLPage(title: "Not disconnected · " + appearance.title, body: body, appearance: appearance).response(.forbidden)
    }
}
