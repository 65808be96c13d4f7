import BrokerCrypto

/// The hosted page of an opened connect session: the providers it allows, each a link that starts its sign-in.
struct ConnectPickerPage {
    var providers: [ConnectPage.ProviderItem]
    var appearance: PageAppearance

    func page() -> HTMLPage {
        var html = """
            <h1>Connect an account</h1>
            <p class="lead">Choose where to sign in. The app that sent you here gets access to this one account; \
            this window closes when you are done.</p>

            """
        if providers.isEmpty {
            html += "<p class=\"empty\" id=\"no-providers\">None of the providers this app allows is set up in this broker.</p>\n"
        } else {
            html += "<ul class=\"list providers\">\n"
            for provider in providers {
                let name = HTMLPage.escape(provider.displayName)
                let icon =
                    provider.iconURL.map { "<img class=\"icon\" src=\"\(HTMLPage.escape($0))\" alt=\"\" width=\"24\" height=\"24\">" } ?? ""
                let href = HTMLPage.escape(appearance.basePath + "/connect/start?provider=" + PercentEncoding.rfc3986(provider.name))
                html +=
                    "<li class=\"provider\" data-provider=\"\(HTMLPage.escape(provider.name))\"><span class=\"name\">\(icon)\(name)</span>"
                    + "<a class=\"button\" href=\"\(href)\">Connect \(name)</a></li>\n"
            }
            html += "</ul>\n"
        }
        return HTMLPage(title: "Connect an account · " + appearance.title, body: html, appearance: appearance)
    }
}
