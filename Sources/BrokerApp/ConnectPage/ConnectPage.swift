import BrokerCrypto
import BrokerCore
import BrokerHTTP

/// The page people open at `/`: the providers to connect and the accounts this browser connected.
///
/// A value built by `ConnectPageHandlers` and rendered without I/O; every dynamic
/// value passes through `HTMLPage.escape`. It holds no token, so it can show none.
struct ConnectPage {
    /// One provider: connectable, or lacking the settings it names.
    struct ProviderItem: Equatable {
        /// The provider key, for example `weibo`.
        var name: String
        /// The settings still to set (`WEIBO_CLIENT_ID`); empty when it can be connected.
        var missing: [String]
    }

    /// One account connected from this browser.
    struct AccountItem: Equatable {
        /// `provider:uid`.
        var id: String
        /// The provider key.
        var provider: String
        /// The user's id at the provider.
        var uid: String
        /// The user's name at the provider, when known.
        var screenName: String?
        /// Its badge and label.
        var status: ConnectPageStatus
    }

    /// Every provider, in the registry's order.
    var providers: [ProviderItem]
    /// This browser's accounts, most recently connected first.
    var accounts: [AccountItem]
    /// The token the Disconnect forms carry; nil when the browser has no session (then there is nothing to disconnect).
    var csrfToken: String?
    /// The one-time message of the last action, if any.
    var notice: ConnectPageNotice?
    /// Set when the page was opened at another loopback address than `BROKER_PUBLIC_URL`, where sign-ins cannot finish.
    var publicURLHint: String?
    /// The path the broker is served under (`BROKER_PUBLIC_URL`'s), put before every link and form action.
    var basePath = ""

    /// The document.
    func page() -> HTMLPage {
        var html = """
            <h1>token-broker</h1>
            <p class="lead">Connect an account once here; your apps then get its token from this broker. \
            Tokens are never shown on this page.</p>

            """
        if let notice { html += Self.noticeHTML(notice) }
        if let publicURLHint {
            let url = HTMLPage.escape(publicURLHint + "/")
            html += "<p class=\"notice warn\" role=\"note\">Sign-ins return to <a href=\"\(url)\">\(url)</a> "
                + "(<code>BROKER_PUBLIC_URL</code>), so connect accounts from that address.</p>\n"
        }
        html += "<section aria-labelledby=\"accounts-heading\">\n<h2 id=\"accounts-heading\">Connected from this browser</h2>\n"
        if accounts.isEmpty {
            html += "<p class=\"empty\" id=\"no-accounts\">No account is connected from this browser. "
                + "Choose Connect next to a provider below.</p>\n"
        } else {
            html += "<ul class=\"list accounts\">\n" + accounts.map(accountHTML).joined() + "</ul>\n"
        }
        html += "</section>\n"
        // Connectable providers first: they are what a visitor came for.
        let ordered = providers.filter(\.missing.isEmpty) + providers.filter { !$0.missing.isEmpty }
        html += "<section aria-labelledby=\"providers-heading\">\n<h2 id=\"providers-heading\">Connect an account</h2>\n"
        html += "<ul class=\"list providers\">\n" + ordered.map(providerHTML).joined() + "</ul>\n"
        html += "<p class=\"fine\">Only accounts connected in this browser are listed above. "
            + "Apps read tokens from <code>/account</code> with the API key.</p>\n</section>"
        return HTMLPage(title: "token-broker", body: html)
    }

    /// One provider's row: a Connect link, or a disabled button described by the settings it lacks.
    private func providerHTML(_ provider: ProviderItem) -> String {
        let name = HTMLPage.escape(Self.displayName(provider.name))
        let key = HTMLPage.escape(provider.name)
        guard !provider.missing.isEmpty else {
            return "<li class=\"provider\" data-provider=\"\(key)\"><span class=\"name\">\(name)</span>"
                + "<a class=\"button\" href=\"\(Self.authorizeHref(provider.name, basePath: basePath))\">Connect \(name)</a></li>\n"
        }
        let settings = provider.missing.map { "<code>\(HTMLPage.escape($0))</code>" }
        let list = settings.count == 1 ? settings[0] : settings.dropLast().joined(separator: ", ") + " and " + settings.last!
        return "<li class=\"provider off\" data-provider=\"\(key)\"><span class=\"name\">\(name)"
            + "<span class=\"sub\" id=\"need-\(key)\">Not set up yet: the broker needs \(list).</span></span>"
            + "<button type=\"button\" class=\"button\" disabled aria-describedby=\"need-\(key)\">Connect \(name)</button></li>\n"
    }

    /// One account's row: who, its status, Reconnect, and Disconnect when there is a token to post.
    private func accountHTML(_ account: AccountItem) -> String {
        let provider = HTMLPage.escape(Self.displayName(account.provider))
        let who = HTMLPage.escape(account.screenName ?? account.uid)
        let sub = account.screenName.map { HTMLPage.escape($0) + " · " } ?? ""
        let state = account.status.state
        let badgeClass = state == .reauthorizationRequired ? "reauthorization" : state.rawValue
        var status = "<span class=\"badge \(badgeClass)\">\(HTMLPage.escape(state.rawValue))</span>"
        if account.status.label != state.rawValue { status += " " + HTMLPage.escape(account.status.label) }
        let reconnectClass = state == .active ? "button secondary" : "button"
        var actions = "<a class=\"\(reconnectClass)\" href=\"\(Self.authorizeHref(account.provider, basePath: basePath))\" "
            + "aria-label=\"Reconnect \(provider) account \(who)\">Reconnect</a>"
        if let csrfToken {
            actions += "<form method=\"post\" action=\"\(HTMLPage.escape(basePath))/disconnect\">"
                + "<input type=\"hidden\" name=\"id\" value=\"\(HTMLPage.escape(account.id))\">"
                + "<input type=\"hidden\" name=\"csrf\" value=\"\(HTMLPage.escape(csrfToken))\">"
                + "<button type=\"submit\" class=\"button danger\" aria-label=\"Disconnect \(provider) account \(who)\">"
                + "Disconnect</button></form>"
        }
        return "<li class=\"account\" data-account=\"\(HTMLPage.escape(account.id))\" data-status=\"\(HTMLPage.escape(state.rawValue))\">"
            + "<span class=\"name\">\(provider)<span class=\"sub\">\(sub)user id \(HTMLPage.escape(account.uid))</span></span>"
            + "<span class=\"state\">\(status)</span><span class=\"actions\">\(actions)</span></li>\n"
    }

    /// The sentence of a one-time notice.
    private static func noticeHTML(_ notice: ConnectPageNotice) -> String {
        let (provider, uid) = split(notice.accountID)
        let account = HTMLPage.escape(displayName(provider) + " account " + uid)
        let text = switch notice.kind {
        case .connected: "Connected \(account)."
        case .disconnected: "Disconnected \(account). The broker no longer keeps its token."
        case .disconnectedUnrevoked: "Disconnected \(account) here, but the provider did not confirm that it revoked "
            + "the access; you can remove the app in your account settings at the provider."
        }
        return "<p class=\"notice ok\" role=\"status\">\(text)</p>\n"
    }

    /// `BASE/authorize?provider=NAME`, escaped for an attribute.
    static func authorizeHref(_ provider: String, basePath: String = "") -> String {
        HTMLPage.escape(basePath + "/authorize?provider=" + PercentEncoding.rfc3986(provider))
    }

    /// `provider:uid` split at the first colon.
    static func split(_ id: String) -> (provider: String, uid: String) {
        guard let colon = id.firstIndex(of: ":") else { return (id, "") }
        return (String(id[..<colon]), String(id[id.index(after: colon)...]))
    }

    /// How a provider is named to people: the preset brands, else the key itself.
    static func displayName(_ provider: String) -> String {
        ["weibo": "Weibo", "github": "GitHub", "google": "Google", "twitter": "Twitter", "tmdb": "TMDB",
         "demo": "Demo"][provider] ?? provider
    }
}
