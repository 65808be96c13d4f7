import BrokerCore

/// The hosted page's form for an `api_key`, `basic` or `bearer` provider: one input per per-account setting (named
/// `setting:NAME`, a name no field can have) and one per declared field, posted to the broker's own
/// `/connect/credentials` (the policy's `form-action 'self'`).
///
/// Every label is the field's description. A secret field (``CredentialScheme/Field/isSecret``) is
/// `type=password` and never filled back in; autocomplete is off, so a shared browser keeps nothing. A field that is
/// not secret and admits one value only (``CredentialScheme/Field/isFixed``: Mailgun's user name `api`, Freshdesk's
/// password `X`) comes filled in with it. The page has no
/// script and no style of its own: the policy of every page applies unchanged.
struct ConnectCredentialForm {
    /// The provider's name and how people know it.
    var provider: String
    var displayName: String
    /// The fields to fill in, in order.
    var fields: [CredentialScheme.Field]
    /// The provider's per-account settings (a subdomain, an application id), asked for before the fields.
    var settings: [AccountSetting] = []
    /// The form flow's state and its anti-forgery token.
    var state: String
    var csrf: String
    /// What went wrong with the last submission, shown above the form; nil on first showing.
    var problem: String?
    /// The values of fields that are not secret and of settings that were accepted (as `setting:NAME`), put back after
    /// a refusal so the person does not type them again.
    var kept: [String: String] = [:]
    var appearance: PageAppearance

    /// The prefix of a setting's input name: a field name has no `:`, so the two never meet.
    static let settingPrefix = "setting:"

    func page() -> HTMLPage {
        let name = HTMLPage.escape(displayName)
        var html = """
            <h1>Connect \(name)</h1>
            <p class="lead">Enter what \(name) gave you. It is checked with \(name) before it is kept, and only the app that \
            sent you here can use it.</p>

            """
        if let problem {
            html += "<p class=\"notice error\" role=\"alert\" id=\"tb-problem\">\(HTMLPage.escape(problem))</p>\n"
        }
        html += """
            <form method="post" action="\(HTMLPage.escape(appearance.basePath))/connect/credentials" autocomplete="off" \
            class="credentials" data-provider="\(HTMLPage.escape(provider))">
            <input type="hidden" name="state" value="\(HTMLPage.escape(state))">
            <input type="hidden" name="csrf" value="\(HTMLPage.escape(csrf))">

            """
        for setting in settings {
            let name = Self.settingPrefix + setting.name
            let value = kept[name].map { " value=\"\(HTMLPage.escape($0))\"" } ?? ""
            html += """
                <p class="field"><label for="tb-setting-\(setting.name)">\(HTMLPage.escape(setting.description))</label>
                <input id="tb-setting-\(setting.name)" name="\(HTMLPage.escape(name))" type="text" \
                autocomplete="off" autocapitalize="off" spellcheck="false" required maxlength="\(AccountSetting.maximumBytes)"\(value)></p>

                """
        }
        for field in fields {
            let id = "tb-field-" + field.name
            let shown = kept[field.name] ?? (field.isFixed ? field.pattern : nil)
            let value = field.isSecret ? "" : (shown.map { " value=\"\(HTMLPage.escape($0))\"" } ?? "")
            html += """
                <p class="field"><label for="\(id)">\(HTMLPage.escape(field.description))</label>
                <input id="\(id)" name="\(HTMLPage.escape(field.name))" type="\(field.isSecret ? "password" : "text")" \
                autocomplete="off" autocapitalize="off" spellcheck="false" required maxlength="\(field.maxLength)"\(value)></p>

                """
        }
        html += "<p><button type=\"submit\" class=\"button\">Connect \(name)</button></p>\n</form>\n"
        return HTMLPage(title: "Connect \(displayName) · " + appearance.title, body: html, appearance: appearance)
    }
}
