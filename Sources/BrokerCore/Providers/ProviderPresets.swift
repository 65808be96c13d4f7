/// The built-in providers with their real endpoints, and the environment variables that hold their credentials.
///
/// Each preset is one ``ProviderConfiguration``: the endpoints, scopes and
/// quirks its provider documents, as data the providers file can state too.
/// The catalogue (`ProviderPresets+Catalogue*.swift`) cites each provider's
/// documentation in docs/providers.md. A preset is enabled by its two
/// credential variables alone (`SLACK_CLIENT_ID`, `SLACK_CLIENT_SECRET`); one
/// without them is listed as unconfigured and costs nothing.
public enum ProviderPresets {
    /// The preset names, sorted.
    public static var names: [String] { all.map(\.name).sorted() }

    /// The preset called `name`, with credentials and endpoint variables read from `environment`, or nil when there is none.
    ///
    /// An endpoint variable that is unfit leaves its placeholder in the URLs;
    /// ``checkVariables(in:)`` refuses such an environment at start-up first.
    /// Microsoft with a tenant id reads the tenant's discovery document
    /// (``microsoftDiscovery(_:tenant:)``) unless `staticEndpoints` asks for the documented URLs.
    public static func preset(named name: String, environment: [String: String], staticEndpoints: Bool = false)
        -> ProviderConfiguration?
    {
        // The API-key catalogue (ProviderPresets+Credentials.swift) is found by name, for the providers file, but is not
        // in `all`: none of it is offered until the file names it.
        guard var preset = all.first(where: { $0.name == name }) ?? credentialCatalogue.first(where: { $0.name == name }) else {
            return nil
        }
        for (key, variable) in preset.settingNames {
            guard let value = environment[variable], !value.isEmpty else { continue }
            switch key {
            case "client_id": preset.clientID = value
            case "client_secret": preset.clientSecret = Secret(value)
            case "api_key": preset.apiKey = Secret(value)
            default: break
            }
        }
        for variable in variables[name] ?? [] {
            guard let value = variable.value(in: environment) else { continue }
            let placeholder = "{" + variable.name + "}"
            func fill(_ url: String?) -> String? { url?.replacingOccurrences(of: placeholder, with: value) }
            preset.authorizeURL = fill(preset.authorizeURL)
            preset.tokenURL = fill(preset.tokenURL)
            preset.refreshURL = fill(preset.refreshURL)
            preset.userURL = fill(preset.userURL)
            preset.revokeURL = fill(preset.revokeURL)
            preset.deviceAuthorizationURL = fill(preset.deviceAuthorizationURL)
            preset.apiBaseURL = fill(preset.apiBaseURL)
            if name == "microsoft", variable.name == "tenant", !staticEndpoints, isTenantID(value) {
                preset = microsoftDiscovery(preset, tenant: value)
            }
        }
        return preset
    }

    /// Refuses an endpoint variable (`MICROSOFT_TENANT`, `GITLAB_URL`, `SALESFORCE_LOGIN_HOST`) whose value cannot stand in a URL.
    static func checkVariables(in environment: [String: String]) throws(ProviderConfigurationError) {
        for name in variables.keys.sorted() {
            for variable in variables[name] ?? [] {
                guard let given = environment[variable.variable], !given.isEmpty, let problem = variable.problem(with: given) else {
                    continue
                }
                throw ProviderConfigurationError(provider: name, key: nil, message: problem, variable: variable.variable)
            }
        }
    }

    /// Every environment variable a preset reads (credentials and endpoint variables), sorted.
    public static var environmentVariables: [String] {
        let credentials = all.flatMap(\.settingNames.values)
        let endpoints = variables.values.flatMap { $0.map(\.variable) }
        return Set(credentials + endpoints).sorted()
    }

    /// The preset variables that hold a secret (client secrets, API keys), sorted: each may be given as a file too
    /// (`GITHUB_CLIENT_SECRET_FILE`).
    public static var secretVariables: [String] {
        Set(all.flatMap { preset in ["client_secret", "api_key"].compactMap { preset.settingNames[$0] } }).sorted()
    }

    /// Every preset without credentials, its URLs still holding their `{placeholders}`.
    static let all: [ProviderConfiguration] = [weibo, github, google, twitter, tmdb] + catalogue + settingsCatalogue

    /// The endpoint variables of the presets that have any, by preset name.
    static let variables: [String: [PresetVariable]] = [
        "microsoft": [PresetVariable(name: "tenant", variable: "MICROSOFT_TENANT", defaultValue: "common", shape: .pathSegment)],
        "gitlab": [PresetVariable(name: "base_url", variable: "GITLAB_URL", defaultValue: "https://gitlab.com", shape: .baseURL)],
        "salesforce": [
            PresetVariable(name: "login_host", variable: "SALESFORCE_LOGIN_HOST", defaultValue: "login.salesforce.com", shape: .host)
        ],
    ]

    /// The credential variables `<PREFIX>_CLIENT_ID` and `<PREFIX>_CLIENT_SECRET`.
    static func credentials(_ prefix: String) -> [String: String] {
        ["client_id": prefix + "_CLIENT_ID", "client_secret": prefix + "_CLIENT_SECRET"]
    }

    /// Sina Weibo: comma-separated scopes, no PKCE, `uid` in the token response, `get_uid.json` otherwise; API calls
    /// carry the token as the `access_token` parameter, as `get_uid.json` does.
    static let weibo: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "weibo", kind: .oauth2,
            authorizeURL: "https://api.weibo.com/oauth2/authorize",
            tokenURL: "https://api.weibo.com/oauth2/access_token",
            userURL: "https://api.weibo.com/2/account/get_uid.json",
            userIDFields: ["uid"],
            userTokenParameter: "access_token",
            revokeURL: "https://api.weibo.com/oauth2/revokeoauth2",
            revokeTokenParameter: "access_token",
            revokeAuthenticatesClient: false,
            scopeSeparator: ",",
            apiBaseURL: "https://api.weibo.com/2",
            settingNames: ["client_id": "WEIBO_CLIENT_ID", "client_secret": "WEIBO_CLIENT_SECRET"],
            displayName: "Weibo"
        )
        c.apiTokenParameter = "access_token"
        return c
    }()

    /// GitHub OAuth app: JSON asked for with `Accept`, errors with HTTP 200, numeric `id` from `/user`, PKCE S256 (2025-07);
    /// the API proxy's base is the REST API root.
    static let github: ProviderConfiguration = {
        var c = ProviderConfiguration(
            name: "github", kind: .oauth2,
            authorizeURL: "https://github.com/login/oauth/authorize",
            tokenURL: "https://github.com/login/oauth/access_token",
            userURL: "https://api.github.com/user",
            userIDFields: ["id"],
            scopes: ["read:user"],
            pkce: true,
            // The REST API root (docs.github.com/rest/meta/meta, "GitHub API Root"), the API proxy's base.
            apiBaseURL: "https://api.github.com",
            settingNames: ["client_id": "GITHUB_CLIENT_ID", "client_secret": "GITHUB_CLIENT_SECRET"],
            displayName: "GitHub"
        )
        // GitHub asks the person to consent again to the whole list; the new token carries what was asked.
        c.scopeUpgrade = ScopeUpgrade(mode: .reconsent)
        // Device flow (GitHub docs, "Authorizing OAuth apps", device flow): once enabled in the app's settings.
        c.deviceAuthorizationURL = "https://github.com/login/device/code"
        return c
    }()

    /// Google: OpenID Connect from the issuer `https://accounts.google.com`, offline access with consent (so a refresh
    /// token is issued each time); the user is the ID token's `sub`, the same id Google's userinfo gives.
    ///
    /// The endpoints, PKCE S256 and the client authentication come from Google's
    /// discovery document; its revocation endpoint takes no client credentials.
    static let google: ProviderConfiguration = {
        var google = ProviderConfiguration(
            name: "google", kind: .oidc,
            revokeAuthenticatesClient: false,
            scopes: ["openid", "email", "profile"],
            extraAuthorizeParameters: [("access_type", "offline"), ("prompt", "consent")],
            settingNames: ["client_id": "GOOGLE_CLIENT_ID", "client_secret": "GOOGLE_CLIENT_SECRET"],
            displayName: "Google"
        )
        // The root of Google's REST APIs on googleapis.com (`/oauth2/v3/userinfo`, `/drive/v3/…`, `/calendar/v3/…`);
        // a few (Gmail on gmail.googleapis.com) have their own host, for which a file entry names another base.
        google.apiBaseURL = "https://www.googleapis.com"
        google.issuer = "https://accounts.google.com"
        // Device sign-in for "TVs and Limited Input devices" clients (golang/oauth2 endpoints.go, Google's limited-input guide).
        google.deviceAuthorizationURL = "https://oauth2.googleapis.com/device/code"
        // Google's OpenID Connect reference: an ID token's iss is https://accounts.google.com or accounts.google.com.
        google.oidcOptions.idTokenIssuerAliases = ["accounts.google.com"]
        // Incremental authorization: the new token carries the earlier grants as well as the new ones.
        google.scopeUpgrade = ScopeUpgrade(mode: .incremental, parameters: [("include_granted_scopes", "true")])
        return google
    }()

    /// Twitter OAuth 1.0a: consumer key and secret, three endpoints, `verify_credentials` for the profile.
    ///
    /// The browser goes to `oauth/authorize`, which always asks; set `authenticate_url`
    /// to `https://api.twitter.com/oauth/authenticate` for "Sign in with Twitter",
    /// which returns at once for a user who already allowed the app.
    static let twitter = ProviderConfiguration(
        name: "twitter", kind: .oauth1,
        authorizeURL: "https://api.twitter.com/oauth/authorize",
        userURL: "https://api.twitter.com/1.1/account/verify_credentials.json?include_entities=false&skip_status=true",
        userIDFields: ["id_str"],
        requestTokenURL: "https://api.twitter.com/oauth/request_token",
        accessTokenURL: "https://api.twitter.com/oauth/access_token",
        // The API host; callers name the version (`/1.1/…`, `/2/…`), and every call is signed (RFC 5849 §3.5.1).
        apiBaseURL: "https://api.twitter.com",
        settingNames: ["client_id": "TWITTER_CONSUMER_KEY", "client_secret": "TWITTER_CONSUMER_SECRET"],
        displayName: "Twitter"
    )

    /// TMDB API v3 session authentication: API key (or read access token), approval page, `/account` for the user id.
    static let tmdb = ProviderConfiguration(
        name: "tmdb", kind: .tmdb,
        authorizeURL: "https://www.themoviedb.org/authenticate",
        userIDFields: ["id"],
        apiBaseURL: "https://api.themoviedb.org/3",
        settingNames: ["api_key": "TMDB_API_KEY"],
        displayName: "TheMovieDB"
    )
}
