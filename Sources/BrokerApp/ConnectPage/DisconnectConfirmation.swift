import BrokerCrypto

/// The page Disconnect leads to: what will happen, a form that POSTs the real delete with the anti-forgery token, and Cancel.
///
/// Disconnecting cannot be undone (the token is deleted and, where the
/// provider allows, revoked), so one click on the connect page only asks.
/// No script: the form's button deletes, the Cancel link goes back.
struct DisconnectConfirmation {
    /// `provider:uid` of the account.
    var accountID: String
    /// How the provider is named to people.
    var providerName: String
    /// The user's name at the provider, else their id.
    var who: String
    /// Whether the broker will ask the provider to revoke the access.
    var revokes: Bool
    /// The token the form carries, bound to this browser's session cookie.
    var csrfToken: String
    /// The title, colours and public path of the pages.
    var appearance = PageAppearance.standard

    /// The document.
    func page() -> HTMLPage {
        let account = HTMLPage.escape(providerName + " account " + who)
        let provider = HTMLPage.escape(providerName)
        let consequence =
            revokes
            ? "The broker deletes its tokens and asks \(provider) to revoke the access it granted."
            : "The broker deletes its tokens. \(provider) keeps the app in your account settings until you remove it there."
        let home = HTMLPage.escape(appearance.home)
        let body = """
            <h1>Disconnect \(account)?</h1>
            <p class="lead">\(consequence) Apps that read this account from the broker lose it; you can connect it again later.</p>
            <form method="post" action="\(HTMLPage.escape(appearance.basePath))/disconnect" class="confirm">\
            <input type="hidden" name="id" value="\(HTMLPage.escape(accountID))">\
            <input type="hidden" name="csrf" value="\(HTMLPage.escape(csrfToken))">\
            <span class="actions"><button type="submit" class="button destructive">Disconnect</button>\
            <a class="button secondary" href="\(home)">Cancel</a></span></form>
            """
        return HTMLPage(title: "Disconnect \(providerName) account? · \(appearance.title)", body: body, appearance: appearance)
    }
}
