import BrokerCore

/// The hosted page's form asking for a provider's per-account settings (``AccountSetting``: a Zendesk subdomain, a
/// Shopify shop) when the connect session did not fix them; it posts to the broker's own `/connect/settings` (the
/// policy's `form-action 'self'`), and the sign-in then starts at the host they name.
///
/// Every label is the setting's description. The page has no script and no style of its own: the policy of every
/// page applies unchanged.
struct ConnectSettingsForm {
    /// The provider's name and how people know it.
    var provider: String
    var displayName: String
    /// The settings to fill in, in order.
    var settings: [AccountSetting]
    /// The anti-forgery token bound to the provider-choice cookie.
    var csrf: String
    /// What was wrong with the last submission, shown above the form; nil on first showing.
    var problem: String?
    /// The values that passed their checks, put back after a refusal.
    var kept: [String: String] = [:]
    var appearance: PageAppearance

    func page() -> HTMLPage {
        let name = HTMLPage.escape(displayName)
        var html = """
            <h1>Connect \(name)</h1>
            <p class="lead">\(name) lives at an address of your organization's own. Say which, then sign in at \(name).</p>

            """
        if let problem {
            html += "<p class=\"notice error\" role=\"alert\" id=\"tb-problem\">\(HTMLPage.escape(problem))</p>\n"
        }
        html += """
            <form method="post" action="\(HTMLPage.escape(appearance.basePath))/connect/settings" autocomplete="off" \
            class="settings" data-provider="\(HTMLPage.escape(provider))">
            <input type="hidden" name="provider" value="\(HTMLPage.escape(provider))">
            <input type="hidden" name="csrf" value="\(HTMLPage.escape(csrf))">

            """
        for setting in settings {
            let id = "tb-setting-" + setting.name
            let value = kept[setting.name].map { " value=\"\(HTMLPage.escape($0))\"" } ?? ""
            html += """
                <p class="field"><label for="\(id)">\(HTMLPage.escape(setting.description))</label>
                <input id="\(id)" name="settings.\(HTMLPage.escape(setting.name))" type="text" autocomplete="off" \
                autocapitalize="off" spellcheck="false" required maxlength="\(AccountSetting.maximumBytes)"\(value)></p>

                """
        }
        html += "<p><button type=\"submit\" class=\"button\">Continue to \(name)</button></p>\n</form>\n"
        return HTMLPage(title: "Connect \(displayName) · " + appearance.title, body: html, appearance: appearance)
    }
}
