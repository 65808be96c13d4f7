import BrokerCore
import BrokerCrypto
import BrokerHTTP

/// The page people open at `/`: the providers they can connect and the accounts this browser connected.
///
/// A value built by `ConnectPageHandlers` and rendered without I/O; every dynamic
/// value passes through `HTMLPage.escape`. It holds no token, so it can show none.
/// Providers that are not configured are left out: a visitor can do nothing
/// with them, and their missing settings are the operator's business
/// (`GET /providers` and the start-up log name them).
struct ConnectPage {
    /// One provider a visitor can connect.
    struct ProviderItem: Equatable {
        /// The provider key, for example `weibo`.
        var name: String
        /// How people know it (`display_name`), for example `Weibo`.
        var displayName: String
        /// Its icon, an `https:` or `data:image/…` URL already checked at start; nil shows none.
        var iconURL: String?
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
        /// Whether its provider is configured, so Reconnect can work.
        var canReconnect = true
        /// Its provider's icon, when the provider is configured with one.
        var iconURL: String? = nil
    }

    /// The configured providers, in the registry's order.
    var providers: [ProviderItem]
    /// This browser's accounts, most recently connected first.
    var accounts: [AccountItem]
    /// How each provider key the registry knows is named to people; a key not in it is shown as it is.
    var displayNames: [String: String] = [:]
    /// The one-time message of the last action, if any.
    var notice: ConnectPageNotice?
    /// Set when the page was opened at another loopback address than `BROKER_PUBLIC_URL`, where sign-ins cannot finish.
    var publicURLHint: String?
    /// The title, colours and public path of the pages.
    var appearance = PageAppearance.standard

    /// The document.
    func page() -> HTMLPage {
        var html = """
            <h1>\(HTMLPage.escape(appearance.title))</h1>
            <p class="lead">Connect an account once here; your apps then get its token from this broker. \
            Tokens are never shown on this page.</p>

            """
        if let notice { html += noticeHTML(notice) }
        if let publicURLHint {
            let url = HTMLPage.escape(publicURLHint + "/")
            html +=
                "<p class=\"notice warn\" role=\"note\">Sign-ins return to <a href=\"\(url)\">\(url)</a> "
                + "(<code>BROKER_PUBLIC_URL</code>), so connect accounts from that address.</p>\n"
        }
        html += "<section aria-labelledby=\"accounts-heading\">\n<h2 id=\"accounts-heading\">Connected from this browser</h2>\n"
        if accounts.isEmpty {
            html +=
                "<p class=\"empty\" id=\"no-accounts\">No account is connected from this browser."
                + (providers.isEmpty ? "" : " Choose Connect next to a provider below.") + "</p>\n"
        } else {
            html += "<ul class=\"list accounts\">\n" + accounts.map(accountHTML).joined() + "</ul>\n"
        }
        html += "</section>\n"
        html += "<section aria-labelledby=\"providers-heading\">\n<h2 id=\"providers-heading\">Connect an account</h2>\n"
        if providers.isEmpty {
            html +=
                "<p class=\"empty\" id=\"no-providers\">No provider is set up in this broker yet; "
                + "whoever runs it can add one.</p>\n"
        } else {
            html += "<ul class=\"list providers\">\n" + providers.map(providerHTML).joined() + "</ul>\n"
        }
        html +=
            "<p class=\"fine\">Only accounts connected in this browser are listed above. "
            + "Apps read tokens from <code>/account</code> with the API key.</p>\n</section>"
        return HTMLPage(title: appearance.title, body: html, appearance: appearance)
    }

    /// One provider's row: its icon and name, and a Connect link.
    private func providerHTML(_ provider: ProviderItem) -> String {
        let name = HTMLPage.escape(provider.displayName)
        return
            "<li class=\"provider\" data-provider=\"\(HTMLPage.escape(provider.name))\"><span class=\"name\">\(Self.icon(provider.iconURL))\(name)</span>"
            + "<a class=\"button\" href=\"\(authorizeHref(provider.name))\">Connect \(name)</a></li>\n"
    }

    /// One account's row: who, its status, Reconnect (when its provider is configured) and Disconnect, which asks first.
    private func accountHTML(_ account: AccountItem) -> String {
        let provider = HTMLPage.escape(displayName(account.provider))
        let who = HTMLPage.escape(account.screenName ?? account.uid)
        let sub = account.screenName.map { HTMLPage.escape($0) + " · " } ?? ""
        let state = account.status.state
        let badgeClass = state == .reauthorizationRequired ? "reauthorization" : state.rawValue
        var status = "<span class=\"badge \(badgeClass)\">\(HTMLPage.escape(state.rawValue))</span>"
        if account.status.label != state.rawValue { status += " " + HTMLPage.escape(account.status.label) }
        var actions = ""
        if account.canReconnect {
            let reconnectClass = state == .active ? "button secondary" : "button"
            actions +=
                "<a class=\"\(reconnectClass)\" href=\"\(authorizeHref(account.provider))\" "
                + "aria-label=\"Reconnect \(provider) account \(who)\">Reconnect</a>"
        }
        // A link to the confirmation page: the delete itself is its form's POST.
        let confirm = HTMLPage.escape(appearance.basePath + "/disconnect?id=" + PercentEncoding.rfc3986(account.id))
        actions += "<a class=\"button danger\" href=\"\(confirm)\" aria-label=\"Disconnect \(provider) account \(who)\">Disconnect</a>"
        return "<li class=\"account\" data-account=\"\(HTMLPage.escape(account.id))\" data-status=\"\(HTMLPage.escape(state.rawValue))\">"
            + "<span class=\"name\">\(Self.icon(account.iconURL))\(provider)<span class=\"sub\">\(sub)user id \(HTMLPage.escape(account.uid))</span></span>"
            + "<span class=\"state\">\(status)</span><span class=\"actions\">\(actions)</span></li>\n"
    }

    /// The sentence of a one-time notice.
    private func noticeHTML(_ notice: ConnectPageNotice) -> String {
        let (provider, uid) = Self.split(notice.accountID)
        let account = HTMLPage.escape(displayName(provider) + " account " + uid)
        let text =
            switch notice.kind {
            case .connected: "Connected \(account)."
            case .disconnected: "Disconnected \(account). The broker no longer keeps its token."
            case .disconnectedUnrevoked:
                "Disconnected \(account) here, but the provider did not confirm that it revoked "
                    + "the access; you can remove the app in your account settings at the provider."
            }
        return "<p class=\"notice ok\" role=\"status\">\(text)</p>\n"
    }

    /// A provider's icon before its name; the name says it all, so the image has no text of its own.
    private static func icon(_ url: String?) -> String {
        url.map { "<img class=\"icon\" src=\"\(HTMLPage.escape($0))\" alt=\"\" width=\"24\" height=\"24\">" } ?? ""
    }

    /// `BASE/authorize?provider=NAME`, escaped for an attribute.
    private func authorizeHref(_ provider: String) -> String {
        HTMLPage.escape(appearance.basePath + "/authorize?provider=" + PercentEncoding.rfc3986(provider))
    }

    /// How `provider` is named to people: its display name, else the key itself.
    func displayName(_ provider: String) -> String {
        displayNames[provider] ?? provider
    }

    /// The provider and uid to show for `id`, split by ``AccountID``; an id without `:` shows whole, as the provider.
    static func split(_ id: String) -> (provider: String, uid: String) {
        guard let parsed = AccountID(id) else { return (id, "") }
        return (parsed.provider, parsed.uid)
    }
}
