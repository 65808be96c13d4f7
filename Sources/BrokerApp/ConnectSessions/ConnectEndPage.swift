import BrokerCore
import BrokerCrypto
import BrokerHTTP

/// The page a connect session ends on, in the popup: it posts exactly one message to its opener and closes.
///
/// The message, `{type: "token-broker:connect", status, state, account?, error?}`, goes to the session's
/// origin only (`postMessage`'s target origin), so a page elsewhere that opened the same URL receives nothing.
/// Without an opener the page goes on to the session's `return_to` with `state` and `account` or `error` in its
/// query, or says the window can be closed. The one inline script reads what to do from the page's data
/// attributes; the policy allows it by its hash, and nothing else.
struct ConnectEndPage {
    /// `connected` or `failed`.
    var status: Status
    /// The flow's state (nil when the session never started one).
    var state: String?
    /// The connected account's id.
    var accountID: String?
    /// The error code, when it failed.
    var error: String?
    /// The sentence shown to the person.
    var message: String
    /// The origin the message is posted to; nil posts nothing.
    var origin: String?
    /// The session's `return_to`, for a page without an opener.
    var returnTo: String?
    /// The page's look.
    var appearance: PageAppearance

    /// How the connection ended.
    enum Status: String {
        case connected
        case failed
    }

    /// Reads the outcome off `#tb-result`, posts it once to the opener at the session's origin and closes; without
    /// an opener, goes on to `return_to` when there is one.
    static let script = """
        (function () {
          "use strict";
          var d = document.getElementById("tb-result").dataset;
          var message = { type: "token-broker:connect", status: d.status, state: d.state || null };
          if (d.account) message.account = d.account;
          if (d.error) message.error = d.error;
          var opener = null;
          try { opener = window.opener; } catch (e) { opener = null; }
          if (opener && d.origin) {
            try { opener.postMessage(message, d.origin); } catch (e) {}
            window.close();
            return;
          }
          if (d.next) window.location.replace(d.next);
        })();
        """

    /// The CSP source allowing exactly ``script`` (CSP Level 3 §2.3.1).
    static let scriptSource = "'sha256-" + Base64.encode(SHA256.hash(Array(script.utf8))) + "'"

    /// Where a page without an opener goes: `return_to` with the outcome in its query.
    var next: String? {
        guard let returnTo else { return nil }
        var pairs: [(String, String)] = []
        if let state { pairs.append(("state", state)) }
        if let accountID { pairs.append(("account", accountID)) }
        if let error { pairs.append(("error", error)) }
        let query = pairs.map { $0.0 + "=" + PercentEncoding.rfc3986($0.1) }.joined(separator: "&")
        guard !query.isEmpty else { return returnTo }
        return returnTo + (returnTo.contains("?") ? "&" : "?") + query
    }

    /// The end page of a flow started from `session` (or of the session itself) that ended with `result`;
    /// `providerError` replaces the error code when the provider named its own (`invalid_scope`).
    static func outcome(
        of session: PendingFlow, state: String?, result: Result<Account, BrokerError>, registry: ProviderRegistry,
        appearance: PageAppearance, providerError: String? = nil
    ) -> (page: ConnectEndPage, status: HTTPStatus) {
        var page = ConnectEndPage(
            status: .connected, state: state, message: "", origin: session.connect?.origin, returnTo: session.returnTo,
            appearance: appearance)
        switch result {
        case .success(let account):
            page.accountID = account.id
            page.message = "Connected your \(registry.provider(named: account.provider)?.displayedName ?? account.provider) account."
            return (page, .ok)
        case .failure(let error):
            page.status = .failed
            page.error = providerError ?? error.code
            page.message = HTMLPage.explanation(error)
            return (page, error.status)
        }
    }

    /// The page as a response with `status`; `extra` fields (cookies) are added after the security headers.
    func response(_ httpStatus: HTTPStatus, extra: HTTPHeaders = HTTPHeaders()) -> Response {
        let headline = status == .connected ? "Account connected" : "The account was not connected"
        var data = " data-status=\"\(status.rawValue)\""
        if let state { data += " data-state=\"\(HTMLPage.escape(state))\"" }
        if let accountID { data += " data-account=\"\(HTMLPage.escape(accountID))\"" }
        if let error { data += " data-error=\"\(HTMLPage.escape(error))\"" }
        if let origin { data += " data-origin=\"\(HTMLPage.escape(origin))\"" }
        if let next { data += " data-next=\"\(HTMLPage.escape(next))\"" }
        let noticeClass = status == .connected ? "notice ok" : "notice error"
        var body = """
            <h1>\(HTMLPage.escape(headline))</h1>
            <p class="\(noticeClass)" role="\(status == .connected ? "status" : "alert")">\(HTMLPage.escape(message))</p>
            <p id="tb-close">You can close this window and go back to the app.</p>
            <div id="tb-result" hidden\(data)></div>

            """
        if let error { body += "<p class=\"fine\">Error code: <code>\(HTMLPage.escape(error))</code></p>\n" }
        if let next { body += "<noscript><p><a class=\"button\" href=\"\(HTMLPage.escape(next))\">Back to the app</a></p></noscript>\n" }
        body += "<script>\(Self.script)</script>"
        let page = HTMLPage(title: headline + " · " + appearance.title, body: body, appearance: appearance)
        var headers = HTMLPage.securityHeaders(appearance)
        headers.replaceOrAdd(
            name: "Content-Security-Policy", value: appearance.contentSecurityPolicy + "; script-src " + Self.scriptSource)
        for field in extra { headers.add(name: field.name, value: field.value) }
        return Response(status: httpStatus, headers: headers, body: Array(page.render().utf8))
    }
}
