import BrokerCore
import BrokerHTTP
import Foundation

/// The hosted page of a connect session for an OAuth provider at each account's own host whose settings the session
/// did not fix: a small form asks for them (``ConnectSettingsForm``), then the sign-in starts there.
///
/// The form is bound as the provider choice is: the session is kept as the browser's choice (the `tb_connect`
/// cookie, `<key>.<nonce>`, `HttpOnly`, on `/connect`), and the post must carry an anti-forgery token that is an HMAC
/// of that cookie (OWASP "Signed Double-Submit Cookie", as the credential form). An unfit value shows the form again
/// naming the setting; the choice stays single use, so a post replayed after the sign-in started finds nothing.
extension ConnectSessionHandlers {
    /// Where the settings form posts (under the public path).
    static let settingsPath = "/connect/settings"

    /// Keeps `session` as this browser's provider choice again and shows the settings form of `provider`.
    func askSettings(
        _ session: PendingFlow, provider: ProviderConfiguration, nonce: String, extra: HTTPHeaders, problem: String?,
        kept: [String: String] = [:]
    ) async -> Response {
        do {
            let key = try await authorization.holdProviderChoice(session, cookieNonce: nonce)
            var headers = OAuthHandlers.noStore()
            // The choice cookie is set anew below; any clearing of it in `extra` would undo that.
            for field in extra where !headers.contains(where: { $0.name == field.name && $0.name != "Set-Cookie" }) {
                if field.name == "Set-Cookie" && field.value.hasPrefix(Self.choiceCookie + "=") { continue }
                headers.add(name: field.name, value: field.value)
            }
            let remaining = max(1, Int(session.expiresAt.timeIntervalSince(Date()).rounded(.down)))
            headers.add(name: "Set-Cookie", value: cookies.set(Self.choiceCookie, key + "." + nonce, path: "/connect", maxAge: remaining))
            logger.log(.info, "settings form shown", [("provider", .string(provider.name)), ("mode", .string("connect_session"))])
            let form = ConnectSettingsForm(
                provider: provider.name, displayName: provider.displayedName, settings: provider.accountSettings,
                csrf: formCSRF.token(session: key + "." + nonce), problem: problem, kept: kept, appearance: appearance)
            return form.page().response(problem == nil ? .ok : .badRequest, extra: headers)
        } catch {
            return end(session, state: nil, result: .failure(error), extra: extra)
        }
    }

    /// `POST /connect/settings`: the settings entered for the chosen provider; the sign-in at the host they name, or
    /// the form again with the problem.
    func submitSettings(_ request: Request) async -> Response {
        let pair = request.cookies[Self.choiceCookie].flatMap(OAuthHandlers.splitFlowCookie)
        guard let fields = Self.formFields(request), let pair,
            formCSRF.verify(fields.first(where: { $0.name == "csrf" })?.value, session: pair.state + "." + pair.nonce)
        else {
            logger.log(.warning, "settings form refused", [("reason", .string("csrf"))])
            return Self.refusal(
                "This form is out of date or did not come from this broker's page. Go back to the app and connect again.",
                appearance: appearance)
        }
        var extra = OAuthHandlers.noStore()
        extra.add(name: "Set-Cookie", value: cookies.clear(Self.choiceCookie, path: "/connect"))
        let session: PendingFlow
        do {
            session = try await authorization.takeProviderChoice(key: pair.state, cookieNonce: pair.nonce)
        } catch {
            var response = gone(error, request: request)
            for field in extra where field.name == "Set-Cookie" { response.headers.add(name: field.name, value: field.value) }
            return response
        }
        let name = fields.first(where: { $0.name == "provider" })?.value ?? ""
        guard let provider = registry.provider(named: name), session.connect?.allows(provider.name) == true else {
            return end(session, state: nil, result: .failure(.unknownProvider(name)), extra: extra)
        }
        var given: [String: String] = [:]
        for field in fields where SettingsParameters.isSetting(field.name) {
            given[String(field.name.dropFirst(SettingsParameters.prefix.count))] = field.value
        }
        let inHost = provider.settingsInHost
        // Values that pass their own checks go back into the form; an unfit one is never written back.
        let kept = given.filter { name, value in
            provider.accountSettings.first { $0.name == name }.map { $0.problem(with: value, inHost: inHost.contains(name)) == nil }
                ?? false
        }
        let repeated = fields.count != Set(fields.map(\.name)).count
        do throws(BrokerError) {
            if repeated { throw .badRequest("Each field may be given once.") }
            _ = try provider.applyingSettings(given)
        } catch {
            logger.log(.info, "settings form refused", [("provider", .string(provider.name)), ("reason", .string(error.code))])
            return await askSettings(session, provider: provider, nonce: pair.nonce, extra: extra, problem: error.message, kept: kept)
        }
        var chosen = session
        chosen.settings = given
        let started = await start(chosen, provider: provider.name, nonce: pair.nonce, extra: extra)
        guard started.status.code == 302, let location = started.headers["Location"] else { return started }
        return Self.continuing(to: location, provider: provider, from: started, appearance: appearance)
    }

    /// A page that goes on to the provider's sign-in at `location` by the `Refresh` header (HTML's "refresh" pragma), with
    /// a link for a browser that does not follow it, carrying `started`'s headers (the `tb_flow` cookie) but not its
    /// `Location`. A `302` would not do: the page's policy has `form-action 'self'`, which also covers where a form post
    /// is redirected (CSP Level 3, form-action), and the provider is another origin.
    static func continuing(to location: String, provider: ProviderConfiguration, from started: Response, appearance: PageAppearance)
        -> Response
    {
        let name = HTMLPage.escape(provider.displayedName)
        let body = """
            <h1>Connect \(name)</h1>
            <p class="lead">Going on to \(name)'s sign-in.</p>
            <p><a class="button" id="tb-continue" href="\(HTMLPage.escape(location))">Continue to \(name)</a></p>

            """
        var extra = HTTPHeaders()
        for field in started.headers where field.name != "Location" { extra.add(name: field.name, value: field.value) }
        extra.add(name: "Refresh", value: "0; url=" + location)
        return HTMLPage(title: "Connect \(provider.displayedName) · " + appearance.title, body: body, appearance: appearance)
            .response(.ok, extra: extra)
    }
}
