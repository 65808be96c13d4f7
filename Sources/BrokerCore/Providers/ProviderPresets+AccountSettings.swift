/// The OAuth 2.0 presets whose every URL is at the customer's own host, named by a per-account setting
/// (``AccountSetting``): each sign-in gives it (`/authorize?provider=zendesk&settings.subdomain=acme`), and the account
/// keeps it for refreshes and the proxy.
///
/// docs/providers.md ("OAuth presets at the customer's own host") cites the page behind each value. Like the rest of
/// the catalogue, each is enabled by `<NAME>_CLIENT_ID` and `<NAME>_CLIENT_SECRET`.
extension ProviderPresets {
    /// The presets that need a per-account setting, in name order.
    static let settingsCatalogue: [ProviderConfiguration] = [okta, shopify, zendesk]

    /// Okta's org authorization server at `{org}.okta.com` (an OpenID provider, used here as OAuth 2.0 with its
    /// userinfo endpoint): PKCE S256, `offline_access` for a refresh token, the user as `sub` (Okta user ids are
    /// unique across orgs), revocation at `oauth2/v1/revoke` (RFC 7009). Orgs on `oktapreview.com`, `okta-emea.com` or
    /// a custom domain need a providers-file entry with their own host.
    static let okta: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "okta", kind: .oauth2,
            authorizeURL: "https://{org}.okta.com/oauth2/v1/authorize",
            tokenURL: "https://{org}.okta.com/oauth2/v1/token",
            userURL: "https://{org}.okta.com/oauth2/v1/userinfo",
            userIDFields: ["sub"],
            revokeURL: "https://{org}.okta.com/oauth2/v1/revoke",
            scopes: ["openid", "profile", "email", "offline_access"],
            pkce: true,
            settingNames: credentials("OKTA"),
            displayName: "Okta"
        )
        c.tokenAnswer.userIDFields = []
        c.userRequest.userNameField = "name"
        c.apiBaseURL = "https://{org}.okta.com/api/v1"
        c.accountSettings = [
            AccountSetting(
                name: "org", description: "Your Okta org: the part before .okta.com (acme for acme.okta.com)",
                pattern: "[a-z0-9][a-z0-9-]*")
        ]
        return c
    }()

    /// Zendesk at `{subdomain}.zendesk.com`: `oauth/authorizations/new`, the code (with the PKCE verifier) traded at
    /// `oauth/tokens`, the user as `user.id` from `api/v2/users/me.json`. Zendesk revokes a token with
    /// `DELETE /api/v2/oauth/tokens/current.json`, which no revocation style here sends: deleting an account revokes
    /// nothing at Zendesk. A user id is unique within one Zendesk account only: two subdomains' users with the same id
    /// would share a broker account.
    static let zendesk: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "zendesk", kind: .oauth2,
            authorizeURL: "https://{subdomain}.zendesk.com/oauth/authorizations/new",
            tokenURL: "https://{subdomain}.zendesk.com/oauth/tokens",
            userURL: "https://{subdomain}.zendesk.com/api/v2/users/me.json",
            userIDFields: ["user.id"],
            scopes: ["read"],
            pkce: true,
            settingNames: credentials("ZENDESK"),
            displayName: "Zendesk"
        )
        c.tokenAnswer.userIDFields = []
        c.userRequest.userNameField = "user.name"
        c.apiBaseURL = "https://{subdomain}.zendesk.com/api/v2"
        c.accountSettings = [
            AccountSetting(
                name: "subdomain", description: "Your Zendesk subdomain: the part before .zendesk.com (acme for acme.zendesk.com)",
                pattern: "[a-z0-9][a-z0-9-]*")
        ]
        return c
    }()

    /// Shopify's Admin API at `{shop}.myshopify.com` (authorization code grant, docs/providers.md cites the pages):
    /// `admin/oauth/authorize` with comma-separated scopes, the code traded at `admin/oauth/access_token` with the
    /// client id and secret in the body. `expiring=1` asks for an expiring offline token (60 minutes, with a refresh
    /// token Shopify replaces on each use), which public apps must use from 1 January 2027; a custom app's answer
    /// without `expires_in` or `refresh_token` is a non-expiring token the broker keeps until it fails. Shopify does not
    /// document PKCE, so none is sent; the broker's `state` binds the callback to its flow. Shopify's `hmac` on the
    /// callback is not checked (the code is worth nothing without the client secret at the shop's own host).
    /// The token travels in `X-Shopify-Access-Token`, to the user endpoint and through the proxy. An offline token
    /// names a shop, not a person: the account's uid is the shop's `id` from `shop.json`. API version 2026-10, the
    /// newest stable one in December 2026 (Shopify supports each quarterly version for 12 months).
    static let shopify: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "shopify", kind: .oauth2,
            authorizeURL: "https://{shop}.myshopify.com/admin/oauth/authorize",
            tokenURL: "https://{shop}.myshopify.com/admin/oauth/access_token",
            userURL: "https://{shop}.myshopify.com/admin/api/2026-10/shop.json",
            userIDFields: ["shop.id"],
            scopes: ["read_products"],
            scopeSeparator: ",",
            pkce: false,
            settingNames: credentials("SHOPIFY"),
            displayName: "Shopify"
        )
        c.tokenAnswer.userIDFields = []
        c.userRequest.userNameField = "shop.name"
        c.extraTokenParameters = [("expiring", "1")]
        c.refreshTokenRotates = true
        let header = APITokenHeader(name: "X-Shopify-Access-Token", format: APITokenHeader.placeholder)
        c.apiTokenHeader = header
        c.userRequest.tokenHeader = header
        c.apiBaseURL = "https://{shop}.myshopify.com/admin/api/2026-10"
        c.accountSettings = [
            AccountSetting(
                name: "shop", description: "Your shop: the part before .myshopify.com (acme for acme.myshopify.com)",
                pattern: "[a-zA-Z0-9][a-zA-Z0-9-]*")
        ]
        return c
    }()
}
