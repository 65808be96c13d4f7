/// The catalogue's presets from Asana to LinkedIn: each provider's endpoints, scopes and quirks as its documentation gives them.
///
/// docs/providers.md cites the page behind every value and says which could
/// not be confirmed there. Every preset is enabled by `<NAME>_CLIENT_ID` and
/// `<NAME>_CLIENT_SECRET`.
extension ProviderPresets {
    /// The twenty OAuth 2.0 presets of the catalogue, in name order.
    static let catalogue: [ProviderConfiguration] = [
        asana, atlassian, bitbucket, box, discord, dropbox, figma, gitlab, hubspot, linear,
        linkedin, microsoft, notion, reddit, salesforce, slack, spotify, strava, twitch, zoom,
    ].map { preset in
        var named = preset
        named.displayName = displayNames[preset.name]
        return named
    }

    /// How the connect page names each catalogue provider, as the provider writes its own name.
    private static let displayNames: [String: String] = [
        "asana": "Asana", "atlassian": "Atlassian", "bitbucket": "Bitbucket", "box": "Box", "discord": "Discord",
        "dropbox": "Dropbox", "figma": "Figma", "gitlab": "GitLab", "hubspot": "HubSpot", "linear": "Linear",
        "linkedin": "LinkedIn", "microsoft": "Microsoft", "notion": "Notion", "reddit": "Reddit", "salesforce": "Salesforce",
        "slack": "Slack", "spotify": "Spotify", "strava": "Strava", "twitch": "Twitch", "zoom": "Zoom",
    ]

    /// Asana: the authorizing user in the token answer's `data` (`gid`, `name`), `users/me` otherwise; PKCE S256.
    /// No scopes are asked for, so the app's configured permissions apply.
    static let asana: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "asana", kind: .oauth2,
            authorizeURL: "https://app.asana.com/-/oauth_authorize",
            tokenURL: "https://app.asana.com/-/oauth_token",
            userURL: "https://app.asana.com/api/1.0/users/me",
            userIDFields: ["data.gid"],
            pkce: true,
            settingNames: credentials("ASANA")
        )
        c.tokenAnswer = TokenAnswerLayout(userIDFields: ["data.gid"], userNameField: "data.name")
        c.userRequest.userNameField = "data.name"
        c.apiBaseURL = "https://app.asana.com/api/1.0"
        return c
    }()

    /// Atlassian (Jira, Confluence Cloud, 3LO): JSON token requests, `audience=api.atlassian.com`, `offline_access` for a
    /// refresh token, rotating refresh tokens, `account_id` from `api.atlassian.com/me`. The cloud ids a site's API calls
    /// need come from `oauth/token/accessible-resources`, asked at connect and kept under `raw.accessible_resources`
    /// (`id`, `url`, `name`, `scopes` of each site); the account is the user, not a site.
    static let atlassian: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "atlassian", kind: .oauth2,
            authorizeURL: "https://auth.atlassian.com/authorize",
            tokenURL: "https://auth.atlassian.com/oauth/token",
            userURL: "https://api.atlassian.com/me",
            userIDFields: ["account_id"],
            scopes: ["read:me", "offline_access"],
            extraAuthorizeParameters: [("audience", "api.atlassian.com"), ("prompt", "consent")],
            settingNames: credentials("ATLASSIAN")
        )
        c.tokenRequestFormat = .json
        c.refreshTokenRotates = true
        c.tokenAnswer.userIDFields = []
        c.resourceLookups = [
            ResourceLookup(
                name: "accessible_resources", url: "https://api.atlassian.com/oauth/token/accessible-resources",
                fields: ["id", "url", "name", "scopes"])
        ]
        c.apiBaseURL = "https://api.atlassian.com"
        return c
    }()

    /// Bitbucket Cloud: HTTP Basic client authentication, scopes set on the OAuth consumer, `uuid` from `/2.0/user`.
    static let bitbucket: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "bitbucket", kind: .oauth2,
            authorizeURL: "https://bitbucket.org/site/oauth2/authorize",
            tokenURL: "https://bitbucket.org/site/oauth2/access_token",
            userURL: "https://api.bitbucket.org/2.0/user",
            userIDFields: ["uuid"],
            clientAuthentication: .clientSecretBasic,
            settingNames: credentials("BITBUCKET")
        )
        c.tokenAnswer.userIDFields = []
        c.userRequest.userNameField = "display_name"
        c.apiBaseURL = "https://api.bitbucket.org/2.0"
        return c
    }()

    /// Box: single-use refresh tokens (each refresh returns the next), `id` from `/2.0/users/me`, RFC 7009-style revocation.
    static let box: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "box", kind: .oauth2,
            authorizeURL: "https://account.box.com/api/oauth2/authorize",
            tokenURL: "https://api.box.com/oauth2/token",
            userURL: "https://api.box.com/2.0/users/me",
            userIDFields: ["id"],
            revokeURL: "https://api.box.com/oauth2/revoke",
            settingNames: credentials("BOX")
        )
        c.refreshTokenRotates = true
        c.tokenAnswer.userIDFields = []
        c.userRequest.userNameField = "name"
        c.apiBaseURL = "https://api.box.com/2.0"
        return c
    }()

    /// Discord: HTTP Basic, PKCE S256, `identify`, the snowflake `id` (a string) from `users/@me`; revoking any token ends them all.
    static let discord: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "discord", kind: .oauth2,
            authorizeURL: "https://discord.com/oauth2/authorize",
            tokenURL: "https://discord.com/api/oauth2/token",
            userURL: "https://discord.com/api/users/@me",
            userIDFields: ["id"],
            revokeURL: "https://discord.com/api/oauth2/token/revoke",
            scopes: ["identify"],
            pkce: true,
            clientAuthentication: .clientSecretBasic,
            settingNames: credentials("DISCORD")
        )
        c.tokenAnswer.userIDFields = []
        c.userRequest.userNameField = "username"
        c.apiBaseURL = "https://discord.com/api"
        return c
    }()

    /// Dropbox: `token_access_type=offline` for a refresh token, `account_id` in the token answer, PKCE S256,
    /// revocation by POSTing the access token as a Bearer credential to `auth/token/revoke`.
    static let dropbox: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "dropbox", kind: .oauth2,
            authorizeURL: "https://www.dropbox.com/oauth2/authorize",
            tokenURL: "https://api.dropboxapi.com/oauth2/token",
            revokeURL: "https://api.dropboxapi.com/2/auth/token/revoke",
            scopes: ["account_info.read"],
            pkce: true,
            extraAuthorizeParameters: [("token_access_type", "offline")],
            clientAuthentication: .clientSecretBasic,
            settingNames: credentials("DROPBOX")
        )
        c.tokenAnswer.userIDFields = ["account_id"]
        c.revocationStyle = .bearer
        c.apiBaseURL = "https://api.dropboxapi.com/2"
        return c
    }()

    /// Figma: HTTP Basic, refresh at its own `oauth/refresh` endpoint, `id` and `handle` from `/v1/me`.
    /// The token and refresh URLs are the `api.figma.com` ones; docs/providers.md notes the older hosts some sources give.
    static let figma: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "figma", kind: .oauth2,
            authorizeURL: "https://www.figma.com/oauth",
            tokenURL: "https://api.figma.com/v1/oauth/token",
            userURL: "https://api.figma.com/v1/me",
            userIDFields: ["id"],
            scopes: ["current_user:read"],
            clientAuthentication: .clientSecretBasic,
            settingNames: credentials("FIGMA")
        )
        c.refreshURL = "https://api.figma.com/v1/oauth/refresh"
        c.tokenAnswer.userIDFields = []
        c.userRequest.userNameField = "handle"
        c.apiBaseURL = "https://api.figma.com"
        return c
    }()

    /// GitLab (gitlab.com or a self-hosted instance at `GITLAB_URL`): PKCE S256, `read_user`, rotating refresh tokens,
    /// the numeric `id` from `/api/v4/user`, RFC 7009 revocation. The id is unique per instance, so change `GITLAB_URL`
    /// only with a fresh set of accounts.
    static let gitlab: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "gitlab", kind: .oauth2,
            authorizeURL: "{base_url}/oauth/authorize",
            tokenURL: "{base_url}/oauth/token",
            userURL: "{base_url}/api/v4/user",
            userIDFields: ["id"],
            revokeURL: "{base_url}/oauth/revoke",
            scopes: ["read_user"],
            pkce: true,
            settingNames: credentials("GITLAB")
        )
        c.refreshTokenRotates = true
        c.tokenAnswer.userIDFields = []
        c.userRequest.userNameField = "username"
        c.apiBaseURL = "{base_url}/api/v4"
        return c
    }()

    /// HubSpot (OAuth v3 endpoints): the user is `hub_id` and `user_id` from the RFC 7662 introspection endpoint, one
    /// account per user and HubSpot account. No revocation: v1's `DELETE /oauth/v1/refresh-tokens/{token}` puts the
    /// token in the path, which the format cannot express, and no v3 revocation endpoint could be confirmed.
    static let hubspot: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "hubspot", kind: .oauth2,
            authorizeURL: "https://app.hubspot.com/oauth/authorize",
            tokenURL: "https://api.hubapi.com/oauth/v3/token",
            userURL: "https://api.hubapi.com/oauth/v3/token/introspect",
            userIDFields: ["hub_id", "user_id"],
            scopes: ["oauth"],
            pkce: true,
            settingNames: credentials("HUBSPOT")
        )
        c.tokenAnswer.userIDFields = []
        c.userRequest = UserInfoRequest(introspection: true, userNameField: "user")
        c.apiBaseURL = "https://api.hubapi.com"
        return c
    }()

    /// Linear: comma-separated scopes (`read`), PKCE S256, the user from GraphQL (`viewer { id name }`), asked with a
    /// POSTed JSON body. No revocation: the endpoint could not be confirmed in Linear's documentation.
    static let linear: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "linear", kind: .oauth2,
            authorizeURL: "https://linear.app/oauth/authorize",
            tokenURL: "https://api.linear.app/oauth/token",
            userURL: "https://api.linear.app/graphql",
            userIDFields: ["data.viewer.id"],
            scopes: ["read"],
            scopeSeparator: ",",
            pkce: true,
            settingNames: credentials("LINEAR")
        )
        c.tokenAnswer.userIDFields = []
        c.userRequest = UserInfoRequest(jsonBody: #"{"query":"{ viewer { id name } }"}"#, userNameField: "data.viewer.name")
        c.apiBaseURL = "https://api.linear.app"
        return c
    }()

    /// LinkedIn (Sign In with LinkedIn using OpenID Connect): `openid profile email`, `sub` from `/v2/userinfo`.
    /// Refresh tokens go to approved partners only; no revocation endpoint is documented.
    static let linkedin: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "linkedin", kind: .oauth2,
            authorizeURL: "https://www.linkedin.com/oauth/v2/authorization",
            tokenURL: "https://www.linkedin.com/oauth/v2/accessToken",
            userURL: "https://api.linkedin.com/v2/userinfo",
            userIDFields: ["sub"],
            scopes: ["openid", "profile", "email"],
            settingNames: credentials("LINKEDIN")
        )
        c.tokenAnswer.userIDFields = []
        c.apiBaseURL = "https://api.linkedin.com"
        return c
    }()
}
