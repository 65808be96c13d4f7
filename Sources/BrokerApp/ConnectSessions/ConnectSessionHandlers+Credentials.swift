import BrokerCore
import BrokerCrypto
import BrokerHTTP
import Foundation
import Synchronization

/// The hosted page of a connect session for `api_key`, `basic` and `bearer` providers: a form instead of a sign-in.
///
/// Choosing such a provider shows ``ConnectCredentialForm``; it posts to `POST /connect/credentials` on the broker's
/// own origin. The post must carry the form's state and anti-forgery token, and the browser the `tb_connect_form`
/// cookie (`<state>.<nonce>`, `HttpOnly`, `SameSite=Lax`, on that path only) the form was shown with: the token is an
/// HMAC of that cookie (OWASP "Signed Double-Submit Cookie", as the connect page's Disconnect), so another site can
/// neither read it nor make the browser send a valid post. The provider's per-account settings are checked first, by
/// the rules of `POST /accounts` (``ProviderConfiguration/applyingSettings(_:)``: a refused value is named, never shown
/// again, and nothing is sent anywhere); then the values (fields, length, control characters, pattern); then they are
/// verified at the provider's host for those settings, and only then stored with the settings; the flow ends as a sign-in's does
/// (outcome at `/flows/{state}`, `flow.completed`, `account.connected`, the message to the opener). A wrong field or
/// a refused credential shows the form again with what went wrong and keeps the flow, so the person can correct it;
/// a secret value is never written back into the page, a log line or an answer.
extension ConnectSessionHandlers {
    /// The cookie binding a shown form to the browser: `<state>.<nonce>`.
    static let formCookie = "tb_connect_form"
    /// Where the form posts (under the public path).
    static let formPath = "/connect/credentials"
    /// The most bytes a form post may have: 16 fields of at most 4 KB, and room for the state and token.
    static let maximumFormBytes = 80 * 1024

    /// How many credentials the provider may refuse on one form before its flow ends as failed.
    static let maximumRefusals = 5

    /// The anti-forgery tokens of the form, keyed with the cookie secret.
    var formCSRF: ConnectPageCSRF { ConnectPageCSRF(secret: access.cookieSecret) }

    /// Whether `provider` is connected with the form rather than a sign-in.
    static func takesForm(_ provider: ProviderConfiguration) -> Bool {
        provider.kind.holdsEnteredCredentials && provider.credentials != nil
    }

    /// Starts the form flow of `provider` for the opened `session` and shows the form, with its cookie.
    func showForm(_ session: PendingFlow, provider: ProviderConfiguration, nonce: String, extra: HTTPHeaders) async -> Response {
        do {
            let flow = try await authorization.beginEntered(session, provider: provider.name, cookieNonce: nonce)
            logger.log(.info, "credential form shown", [("provider", .string(provider.name)), ("mode", .string("connect_session"))])
            var headers = extra
            let remaining = max(1, Int(flow.expiresAt.timeIntervalSince(Date()).rounded(.down)))
            headers.add(
                name: "Set-Cookie", value: cookies.set(Self.formCookie, flow.state + "." + nonce, path: Self.formPath, maxAge: remaining))
            return form(flow, provider: provider, nonce: nonce, problem: nil).response(.ok, extra: headers)
        } catch {
            logger.log(.info, "connect session failed", [("error", .string(error.code))])
            return end(session, state: nil, result: .failure(error), extra: extra)
        }
    }

    /// `POST /connect/credentials`: the form's values; the end page when stored, the form again with the problem
    /// otherwise.
    func submit(_ request: Request) async -> Response {
        var noStore = OAuthHandlers.noStore()
        let pair = request.cookies[Self.formCookie].flatMap(OAuthHandlers.splitFlowCookie)
        guard let fields = Self.formFields(request), let pair, let state = fields.first(where: { $0.name == "state" })?.value,
            ExactKey.same(state, pair.state),
            formCSRF.verify(fields.first(where: { $0.name == "csrf" })?.value, session: pair.state + "." + pair.nonce)
        else {
            logger.log(.warning, "credential form refused", [("reason", .string("csrf"))])
            return Self.refusal(
                "This form is out of date or did not come from this broker's page. Go back to the app and connect again.",
                appearance: appearance)
        }
        let flow: PendingFlow
        do {
            flow = try await authorization.takeEntered(state: pair.state, cookieNonce: pair.nonce)
        } catch {
            noStore.add(name: "Set-Cookie", value: cookies.clear(Self.formCookie, path: Self.formPath))
            var response = ConnectEndPage(
                status: .failed, state: nil, error: "expired", message: error.message, origin: nil, returnTo: nil,
                appearance: appearance
            ).response(error.status)
            for field in noStore { response.headers.add(name: field.name, value: field.value) }
            return response
        }
        guard let provider = registry.provider(named: flow.provider), let scheme = provider.credentials else {
            return end(flow, state: flow.state, result: .failure(.unknownProvider(flow.provider)), extra: noStore)
        }
        var entered: [String: String] = [:]
        var givenSettings: [String: String] = [:]
        let prefix = ConnectCredentialForm.settingPrefix
        for field in fields where field.name != "state" && field.name != "csrf" {
            if field.name.hasPrefix(prefix) {
                givenSettings[String(field.name.dropFirst(prefix.count))] = field.value
            } else {
                entered[field.name] = field.value
            }
        }
        // What was entered in fields that are not secret goes back into the form; a secret never does.
        var kept = entered.filter { name, value in
            scheme.fields.contains { $0.name == name && !$0.isSecret } && value.utf8.count <= 256
                && !value.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
        }
        func again(_ problem: String, _ status: HTTPStatus) async -> Response {
            do { try await authorization.returnEntered(flow) } catch {
                return end(flow, state: flow.state, result: .failure(error), extra: noStore)
            }
            return form(flow, provider: provider, nonce: pair.nonce, problem: problem, kept: kept).response(status, extra: noStore)
        }
        if fields.count != Set(fields.map(\.name)).count {
            return await again("Each field may be given once.", .badRequest)
        }
        // Settings the session fixed (or a reconnect's account holds) are not the person's to change: the form does not
        // ask for them, and a post that gives some anyway is refused.
        if !flow.settings.isEmpty {
            guard givenSettings.isEmpty else {
                return await again("The app chose these settings; they cannot be changed here.", .badRequest)
            }
            givenSettings = flow.settings
        }
        // Settings first, as on `POST /accounts`: a value that may not stand in the provider's URLs or headers is
        // refused before any call; none is written back into the page, the refused one least of all.
        let resolved: ProviderConfiguration
        let settings: [String: String]
        do throws(BrokerError) {
            (resolved, settings) = try provider.applyingSettings(givenSettings)
        } catch {
            logger.log(.info, "credential form refused", [("provider", .string(provider.name)), ("reason", .string(error.code))])
            return await again(error.message, .badRequest)
        }
        for (name, value) in settings { kept[prefix + name] = value }
        let values: CredentialValues
        switch scheme.check(entered) {
        case .success(let checked): values = checked
        case .failure(let problem):
            logger.log(.info, "credential form refused", [("provider", .string(provider.name)), ("reason", .string("invalid_value"))])
            return await again(problem.message + ".", .badRequest)
        }
        let outcome: CredentialVerifier.Outcome?
        do {
            outcome = try await verifier.verify(values, provider: resolved)
        } catch {
            logger.log(.warning, "credential check failed", [("provider", .string(provider.name)), ("error", .string(error.code))])
            return await again(
                "\(provider.displayedName) could not be asked whether these are right (\(error.code)). Try again in a moment.",
                error.status)
        }
        if let outcome, !outcome.valid {
            logger.log(.warning, "credential refused", [("provider", .string(provider.name)), ("status", .int(outcome.status))])
            // A form is not a way to try keys at the provider from the broker's address: the last refusal allowed
            // ends the flow as failed.
            if formRefusals.refused(flow.state) >= Self.maximumRefusals {
                formRefusals.forget(flow.state)
                let error = BrokerError.credentialInvalid(provider: provider.name, status: outcome.status)
                let completion = await authorization.failEntered(flow, error: error, cookieNonce: pair.nonce)
                noStore.add(name: "Set-Cookie", value: cookies.clear(Self.formCookie, path: Self.formPath))
                return end(flow, state: flow.state, result: completion.result, extra: noStore)
            }
            return await again(
                "\(provider.displayedName) refused these credentials (HTTP \(outcome.status)). Check them and try again.",
                HTTPStatus(422, "Unprocessable Content"))
        }
        formRefusals.forget(flow.state)
        let reconnect = flow.connect?.reconnectAccountID.flatMap(AccountID.init)?.uid
        let uid = outcome?.userID ?? reconnect ?? values.derivedUID(provider: provider)
        let completion = await authorization.finishEntered(flow, values: values, uid: uid, settings: settings, cookieNonce: pair.nonce)
        switch completion.result {
        case .success(let account):
            logger.log(
                .info, "credential stored",
                [
                    ("provider", .string(provider.name)), ("account", .string(account.id)), ("verified", .bool(outcome != nil)),
                    ("mode", .string("connect_session")),
                ])
            audit.record(.flowCompleted, account, caller: AccessControl.browser, request: request)
        case .failure(let error):
            logger.log(.info, "connect session failed", [("provider", .string(provider.name)), ("error", .string(error.code))])
        }
        noStore.add(name: "Set-Cookie", value: cookies.clear(Self.formCookie, path: Self.formPath))
        return end(flow, state: flow.state, result: completion.result, extra: noStore)
    }

    /// The form of `flow`'s provider, its token bound to the form cookie.
    private func form(
        _ flow: PendingFlow, provider: ProviderConfiguration, nonce: String, problem: String?, kept: [String: String] = [:]
    ) -> HTMLPage {
        ConnectCredentialForm(
            provider: provider.name, displayName: provider.displayedName, fields: provider.credentials?.fields ?? [],
            settings: flow.settings.isEmpty ? provider.accountSettings : [], state: flow.state,
            csrf: formCSRF.token(session: flow.state + "." + nonce),
            problem: problem, kept: kept,
            appearance: appearance
        ).page()
    }

    /// The form post's fields: an `application/x-www-form-urlencoded` body of at most ``maximumFormBytes``, nothing in
    /// the query (a value there would reach access logs); nil otherwise.
    static func formFields(_ request: Request) -> [(name: String, value: String)]? {
        let type = (request.headers["Content-Type"] ?? "").lowercased()
        guard type.hasPrefix("application/x-www-form-urlencoded"), request.queryItems.isEmpty,
            request.body.count <= maximumFormBytes, let text = String(validating: request.body, as: UTF8.self)
        else { return nil }
        return PercentEncoding.parseForm(text, .lenient)
    }

    /// A page refusing a post that is not this broker's form: 403, no outcome posted anywhere.
    static func refusal(_ message: String, appearance: PageAppearance) -> Response {
        let body = """
            <h1>The form could not be used</h1>
            <p class="notice error" role="alert">\(HTMLPage.escape(message))</p>
            """
        return HTMLPage(title: "The form could not be used · " + appearance.title, body: body, appearance: appearance)
            .response(.forbidden, extra: OAuthHandlers.noStore())
    }
}

/// The refusals of each shown form, by its flow's state, in this process (a form is posted to whichever replica; each
/// counts its own, so the bound is per replica). At most ``capacity`` forms are tracked: past that the oldest counts are
/// dropped, so memory stays bounded whatever the traffic.
final class FormRefusals: Sendable {
    static let capacity = 10_000
    private let counts = Mutex<(order: [String], count: [String: Int])>(([], [:]))

    /// Records one more refusal for `state`; the count so far.
    func refused(_ state: String) -> Int {
        counts.withLock { table in
            if table.count[state] == nil {
                if table.order.count >= Self.capacity {
                    let dropped = table.order.prefix(Self.capacity / 2)
                    for key in dropped { table.count[key] = nil }
                    table.order.removeFirst(dropped.count)
                }
                table.order.append(state)
            }
            let next = (table.count[state] ?? 0) + 1
            table.count[state] = next
            return next
        }
    }

    /// Forgets `state` (its form ended).
    func forget(_ state: String) {
        counts.withLock { table in
            guard table.count.removeValue(forKey: state) != nil else { return }
            table.order.removeAll { $0 == state }
        }
    }
}
