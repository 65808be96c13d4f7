/// The catalogue's presets from Microsoft to Zoom; see ``ProviderPresets/catalogue``.
extension ProviderPresets {
    /// Microsoft Entra ID (identity platform v2.0) for the tenant in `MICROSOFT_TENANT` (`common` unless set):
    /// `offline_access` for a refresh token, PKCE S256, the object `id` from Microsoft Graph `/me`. The endpoints are
    /// the documented static ones with the tenant filled in; a tenant id makes it OpenID Connect
    /// (``microsoftDiscovery(_:tenant:)``). No revocation endpoint exists for one grant.
    static let microsoft: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "microsoft", kind: .oauth2,
            authorizeURL: "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/authorize",
            tokenURL: "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token",
            userURL: "https://graph.microsoft.com/v1.0/me",
            userIDFields: ["id"],
            scopes: ["openid", "profile", "email", "offline_access", "User.Read"],
            pkce: true,
            settingNames: credentials("MICROSOFT")
        )
        c.tokenAnswer.userIDFields = []
        c.userRequest.userNameField = "displayName"
        c.apiBaseURL = "https://graph.microsoft.com"
        // Incremental consent: asked for more, the person consents to the new scopes only.
        c.scopeUpgrade = ScopeUpgrade(mode: .additive)
        // Device code flow (Entra, v2-oauth2-device-code): the same tenant as the other endpoints.
        c.deviceAuthorizationURL = "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/devicecode"
        return c
    }()

    /// Notion: HTTP Basic with a JSON body, `owner=user`, no scopes; the user is the workspace and `owner.user.id` of
    /// the token answer (one account per user and workspace); refresh tokens rotate; JSON revocation of the access
    /// token. Every call
    /// carries `Notion-Version`.
    static let notion: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "notion", kind: .oauth2,
            authorizeURL: "https://api.notion.com/v1/oauth/authorize",
            tokenURL: "https://api.notion.com/v1/oauth/token",
            revokeURL: "https://api.notion.com/v1/oauth/revoke",
            extraAuthorizeParameters: [("owner", "user")],
            clientAuthentication: .clientSecretBasic,
            settingNames: credentials("NOTION")
        )
        c.tokenRequestFormat = .json
        c.tokenAnswer = TokenAnswerLayout(userIDFields: ["workspace_id", "owner.user.id"], userNameField: "owner.user.name")
        c.refreshTokenRotates = true
        c.revocationStyle = .json
        c.revokesAccessToken = true
        c.requestHeaders = [("Notion-Version", "2025-09-03")]
        c.apiBaseURL = "https://api.notion.com/v1"
        return c
    }()

    /// Reddit: HTTP Basic (required), `duration=permanent` for a refresh token, `identity`, `id` from
    /// `oauth.reddit.com/api/v1/me`, and a descriptive User-Agent on every call, as Reddit's API rules require.
    /// Set your own (`<platform>:<app id>:<version> (by /u/<name>)`) with `request_headers` in the providers file.
    static let reddit: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "reddit", kind: .oauth2,
            authorizeURL: "https://www.reddit.com/api/v1/authorize",
            tokenURL: "https://www.reddit.com/api/v1/access_token",
            userURL: "https://oauth.reddit.com/api/v1/me",
            userIDFields: ["id"],
            revokeURL: "https://www.reddit.com/api/v1/revoke_token",
            scopes: ["identity"],
            extraAuthorizeParameters: [("duration", "permanent")],
            clientAuthentication: .clientSecretBasic,
            settingNames: credentials("REDDIT")
        )
        c.tokenAnswer.userIDFields = []
        c.requestHeaders = [("User-Agent", "web:token-broker:1.0 (OAuth token broker)")]
        c.apiBaseURL = "https://oauth.reddit.com"
        return c
    }()

    /// Salesforce at the login host in `SALESFORCE_LOGIN_HOST` (`login.salesforce.com`; `test.salesforce.com` for a
    /// sandbox, or a My Domain host): `refresh_token` scope, PKCE S256, the user as `organization_id` and `user_id` from
    /// OpenID userinfo, revocation without client authentication. Token answers carry no `expires_in`, so the broker
    /// cannot know when to refresh. No fixed API base: each org's API is at its own `instance_url`, kept with the account
    /// under `raw`, which the proxy uses once it is an `https` URL under `salesforce.com` or `force.com`.
    static let salesforce: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "salesforce", kind: .oauth2,
            authorizeURL: "https://{login_host}/services/oauth2/authorize",
            tokenURL: "https://{login_host}/services/oauth2/token",
            userURL: "https://{login_host}/services/oauth2/userinfo",
            userIDFields: ["organization_id", "user_id"],
            revokeURL: "https://{login_host}/services/oauth2/revoke",
            revokeAuthenticatesClient: false,
            scopes: ["id", "api", "refresh_token"],
            pkce: true,
            settingNames: credentials("SALESFORCE")
        )
        c.tokenAnswer.userIDFields = []
        c.apiBaseFromTokenAnswer = TokenAnswerAPIBase(field: "instance_url", hostSuffixes: ["salesforce.com", "force.com"])
        return c
    }()

    /// Slack (OAuth v2) for a user token: scopes go in `user_scope` (comma-separated), the user token and its refresh
    /// token sit under `authed_user`, the user is the workspace and `authed_user.id`; errors come with HTTP 200 and
    /// `ok: false`. Refresh tokens exist only with token rotation switched on for the app, and then rotate.
    /// Revocation is `auth.revoke` with the token as its own credential.
    static let slack: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "slack", kind: .oauth2,
            authorizeURL: "https://slack.com/oauth/v2/authorize",
            tokenURL: "https://slack.com/api/oauth.v2.access",
            revokeURL: "https://slack.com/api/auth.revoke",
            scopes: ["users:read"],
            scopeSeparator: ",",
            clientAuthentication: .clientSecretBasic,
            settingNames: credentials("SLACK")
        )
        c.scopeParameter = "user_scope"
        c.tokenAnswer = TokenAnswerLayout(tokensAt: "authed_user", userIDFields: ["team.id", "authed_user.id"])
        c.refreshTokenRotates = true
        c.revocationStyle = .bearer
        c.apiBaseURL = "https://slack.com/api"
        // More `user_scope` scopes are added to the user token's grant.
        c.scopeUpgrade = ScopeUpgrade(mode: .additive)
        return c
    }()

    /// Spotify: HTTP Basic, `user-read-private user-read-email`, `id` and `display_name` from `/v1/me`. A refresh answer
    /// may or may not carry a new refresh token; without one the old one stays. No revocation endpoint exists.
    static let spotify: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "spotify", kind: .oauth2,
            authorizeURL: "https://accounts.spotify.com/authorize",
            tokenURL: "https://accounts.spotify.com/api/token",
            userURL: "https://api.spotify.com/v1/me",
            userIDFields: ["id"],
            scopes: ["user-read-private", "user-read-email"],
            clientAuthentication: .clientSecretBasic,
            settingNames: credentials("SPOTIFY")
        )
        c.tokenAnswer.userIDFields = []
        c.userRequest.userNameField = "display_name"
        c.apiBaseURL = "https://api.spotify.com"
        return c
    }()

    /// Strava: comma-separated scopes (`read`), the athlete in the first token answer (`athlete.id`, an integer),
    /// `/api/v3/athlete` otherwise; deauthorization takes the access token as `access_token`.
    static let strava: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "strava", kind: .oauth2,
            authorizeURL: "https://www.strava.com/oauth/authorize",
            tokenURL: "https://www.strava.com/oauth/token",
            userURL: "https://www.strava.com/api/v3/athlete",
            userIDFields: ["id"],
            revokeURL: "https://www.strava.com/oauth/deauthorize",
            revokeTokenParameter: "access_token",
            revokeAuthenticatesClient: false,
            scopes: ["read"],
            scopeSeparator: ",",
            settingNames: credentials("STRAVA")
        )
        c.tokenAnswer = TokenAnswerLayout(userIDFields: ["athlete.id"], userNameField: "athlete.username")
        c.userRequest.userNameField = "username"
        c.apiBaseURL = "https://www.strava.com/api/v3"
        return c
    }()

    /// Twitch: the client id and secret in the body, `user:read:email`, the user from the validate endpoint
    /// (`Authorization: OAuth`, `user_id`, `login`); revocation sends the access token and the client id alone.
    static let twitch: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "twitch", kind: .oauth2,
            authorizeURL: "https://id.twitch.tv/oauth2/authorize",
            tokenURL: "https://id.twitch.tv/oauth2/token",
            userURL: "https://id.twitch.tv/oauth2/validate",
            userIDFields: ["user_id"],
            revokeURL: "https://id.twitch.tv/oauth2/revoke",
            revokeAuthenticatesClient: false,
            scopes: ["user:read:email"],
            settingNames: credentials("TWITCH")
        )
        c.tokenAnswer.userIDFields = []
        c.userRequest = UserInfoRequest(authScheme: "OAuth", userNameField: "login")
        c.revokesAccessToken = true
        c.revokeSendsClientID = true
        c.apiBaseURL = "https://api.twitch.tv/helix"
        c.apiClientIDHeader = "Client-Id"
        return c
    }()

    /// Zoom: HTTP Basic, PKCE S256, scopes set on the app in the Marketplace, rotating refresh tokens, `id` from
    /// `/v2/users/me`, revocation of the access token with HTTP Basic.
    static let zoom: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "zoom", kind: .oauth2,
            authorizeURL: "https://zoom.us/oauth/authorize",
            tokenURL: "https://zoom.us/oauth/token",
            userURL: "https://api.zoom.us/v2/users/me",
            userIDFields: ["id"],
            revokeURL: "https://zoom.us/oauth/revoke",
            pkce: true,
            clientAuthentication: .clientSecretBasic,
            settingNames: credentials("ZOOM")
        )
        c.refreshTokenRotates = true
        c.tokenAnswer.userIDFields = []
        c.userRequest.userNameField = "display_name"
        c.revokesAccessToken = true
        c.apiBaseURL = "https://api.zoom.us/v2"
        return c
    }()
}
