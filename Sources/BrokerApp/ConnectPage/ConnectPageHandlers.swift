import BrokerCore
import BrokerHTTP
import Foundation

/// `GET /` (the connect page) and `POST /disconnect` (its Disconnect buttons).
///
/// The page lists the accounts of this browser's session cookie; Disconnect needs
/// that session and the page's anti-forgery token, deletes the account through
/// `AccountService.delete` (which revokes it at the provider) and 303s back to `/`.
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
    /// Where refusals and deletions are logged, never with a token.
    let logger: BrokerLogger
    /// The injected clock for status labels and the session's issue time.
    let now: @Sendable () -> Date

    /// Creates the handlers over the same services as the OAuth surface.
    init(accounts: AccountService, registry: ProviderRegistry, access: AccessControl, cookies: CookieHeader,
         publicURL: String, logger: BrokerLogger, now: @escaping @Sendable () -> Date) {
        self.accounts = accounts
        self.registry = registry
        self.access = access
        self.cookies = cookies
        self.publicURL = publicURL
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
                let account = try await accounts.account(id: id)
                items.append(ConnectPage.AccountItem(
                    id: id, provider: account.provider, uid: account.uid, screenName: account.screenName,
                    status: ConnectPageStatus.make(status: account.status, expiresAt: account.expiresAt, now: now())))
            } catch {
                if let status = ConnectPageStatus.make(refusal: error) {
                    items.append(ConnectPage.AccountItem(id: id, provider: provider, uid: uid, screenName: nil, status: status))
                } else if error != .notFound {
                    // Deleted elsewhere (notFound) just drops out of the list; anything else is a real failure.
                    logger.log(.warning, "connect page failed", [("error", .string(error.code))])
                    return HTMLPage.failure(error, during: .view).response(error.status)
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
            providers: registry.all.map { ConnectPage.ProviderItem(name: $0.name, missing: $0.missingSettings) },
            accounts: items,
            csrfToken: session == nil ? nil : request.cookies[SessionCookie.name].map { csrf.token(session: $0) },
            notice: notice,
            publicURLHint: ConnectPage.publicURLHint(requestHost: request.headers["Host"], publicURL: publicURL),
            basePath: cookies.basePath)
        return page.page().response(.ok, extra: extra)
    }

    /// `POST /disconnect` with form fields `id` and `csrf`: 403 and nothing deleted unless both check out.
    func disconnect(_ request: Request) async -> Response {
        let form = RequestForm(request)
        guard let cookie = request.cookies[SessionCookie.name], var session = access.session(request),
              csrf.verify(form["csrf"], session: cookie) else {
            logger.log(.warning, "disconnect refused", [("reason", .string("csrf"))])
            return refusal(request, "This form is out of date or did not come from the connect page. "
                           + "Open the page again and retry.")
        }
        guard let id = form["id"], session.holds(id) else {
            logger.log(.warning, "disconnect refused", [("reason", .string("not_in_session"))])
            return refusal(request, "This browser did not connect that account, so it cannot disconnect it.")
        }
        var kind = ConnectPageNotice.Kind.disconnected
        do {
            let result = try await accounts.delete(id: id)
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
                return request.wantsHTML ? HTMLPage.failure(error, during: .disconnect).response(error.status) : error.response
            }
        }
        session.accountIDs.removeAll { ExactKey.same($0, id) }
        session.issuedAt = Int(now().timeIntervalSince1970)
        var headers = HTTPHeaders([("Cache-Control", "no-store"), ("Location", cookies.basePath + "/")])
        headers.add(name: "Set-Cookie", value: access.sessionCookieHeader(session, cookies: cookies))
        headers.add(name: "Set-Cookie", value: ConnectPageNotice(kind: kind, accountID: id)
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
            <p><a class="button" href="/">Back to token-broker</a></p>
            """
        return HTMLPage(title: "Not disconnected · token-broker", body: body).response(.forbidden)
    }
}
