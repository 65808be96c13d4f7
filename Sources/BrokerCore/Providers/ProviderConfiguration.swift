/// One provider as the broker uses it: preset values merged with providers-file overrides and environment credentials.
public struct ProviderConfiguration: Sendable {
    /// The provider key used in URLs and account ids, for example `github`.
    public var name: String
    /// The protocol the provider speaks.
    public var kind: ProviderKind
    /// The OAuth 2.0 client id, or the OAuth 1.0a consumer key.
    public var clientID: String?
    /// The OAuth 2.0 client secret, or the OAuth 1.0a consumer secret.
    public var clientSecret: Secret?
    /// Where the browser is sent to authorize.
    public var authorizeURL: String?
    /// The OAuth 2.0 token endpoint.
    public var tokenURL: String?
    /// The endpoint that names the user when the token response does not.
    public var userURL: String?
    /// The JSON paths (``ProviderJSONPath``) of the stable user id in the user response (`id`, `sub`, `uid`); several
    /// values are joined with `:` (HubSpot's `hub_id` and `user_id`). Empty means `id`.
    public var userIDFields: [String]
    /// When set, the user endpoint gets the access token as this query parameter instead of a Bearer header (Weibo: `access_token`).
    public var userTokenParameter: String?
    /// The revocation endpoint, or nil when the provider has none.
    public var revokeURL: String?
    /// The form parameter carrying the token to revoke: `token` (RFC 7009 §2.1) or Weibo's `access_token`.
    public var revokeTokenParameter: String
    /// Whether the revocation request carries client authentication (RFC 7009 §2.1); Google's and Weibo's do not.
    public var revokeAuthenticatesClient: Bool
    /// The scopes requested at authorization.
    public var scopes: [String]
    /// What joins the scopes: `,` for Weibo, a space for others (RFC 6749 §3.3).
    public var scopeSeparator: String
    /// Whether to send a PKCE S256 challenge (RFC 7636).
    public var pkce: Bool
    /// Parameters added to every authorize URL, in order (Google: `access_type=offline`, `prompt=consent`).
    public var extraAuthorizeParameters: [(String, String)]
    /// Parameters added to every token request, in order: a remote MCP server's `resource` (RFC 8707 §2).
    public var extraTokenParameters: [(String, String)] = []
    /// How the broker authenticates at the token endpoint.
    public var clientAuthentication: ClientAuthentication
    /// For an `mcp` provider, the server's URL (`server`): the protected resource whose metadata names its
    /// authorization server (RFC 9728), the `resource` of every authorize and token request (RFC 8707), and the API
    /// base the proxy calls.
    public var mcpServer: String? = nil
    /// Whether token requests must reach public addresses only (``UpstreamRequest/publicAddressesOnly``): a remote MCP
    /// server's discovered endpoints, unless the entry allows private addresses (`api_allow_private`).
    public var tokenEndpointPublicOnly: Bool = false
    /// For an `mcp` provider, the `client_name` the broker registers under (RFC 7591 §2); nil says `token-broker`.
    public var mcpClientName: String? = nil
    /// The OAuth 1.0a request-token endpoint.
    public var requestTokenURL: String?
    /// The OAuth 1.0a access-token endpoint.
    public var accessTokenURL: String?
    /// The TMDB API key.
    public var apiKey: Secret?
    /// The TMDB API base URL, for example `https://api.themoviedb.org/3`.
    public var apiBaseURL: String?
    /// Whether the API proxy may reach `apiBaseURL`'s host on a private or special-purpose address
    /// (`api_allow_private`, for a provider deployed on-premise); false refuses such addresses.
    public var apiAllowPrivate: Bool = false
    /// The query parameter the API proxy carries the access token in instead of `Authorization: Bearer`
    /// (`api_token_param`; Weibo's `access_token`); see ``ProxyCredentialPlacement``.
    public var apiTokenParameter: String? = nil
    /// The header field the API proxy carries the access token in instead of `Authorization` (`api_token_header`;
    /// Shopify's `X-Shopify-Access-Token`), and its value with `{access_token}` where the token goes
    /// (`api_token_format`); nil for `Authorization: Bearer {access_token}`. See ``ProxyCredentialPlacement``.
    public var apiTokenHeader: APITokenHeader? = nil
    /// A header field the API proxy sets to the client id on every call (`api_client_id_header`; Twitch Helix's
    /// `Client-Id`); see ``ProxyCredentialPlacement``.
    public var apiClientIDHeader: String? = nil
    /// The OAuth 1.0a "Sign in with" endpoint (Twitter `oauth/authenticate`).
    public var authenticateURL: String?
    /// How each missing setting is named to the operator: a key such as `client_id` maps to `WEIBO_CLIENT_ID` for presets.
    public var settingNames: [String: String]
    /// The authorization server's issuer identifier (RFC 9207 §2), compared with a callback's `iss`; nil when unknown.
    public var issuer: String? = nil
    /// The device authorization endpoint (RFC 8628 §3.1, `device_authorization_url`); nil when the provider offers no device sign-in.
    public var deviceAuthorizationURL: String? = nil
    /// Whether the device answer's `verification_uri` may be `http:` (`device_allow_http`, for a provider on a private
    /// network or a test fake); false requires `https:`.
    public var deviceAllowHTTP: Bool = false
    /// Whether the provider puts `iss` in every authorization response (RFC 9207 §3); a callback without it is then refused.
    public var requiresIssuerParameter: Bool = false
    /// How the connect page names the provider to people (`GitHub`); nil shows ``name``.
    public var displayName: String?
    /// The provider's icon on the connect page: an `https:` or `data:image/…` URL; nil shows none.
    public var iconURL: String?

    /// The name people see: ``displayName``, else the key.
    public var displayedName: String { displayName ?? name }
    /// Where the OAuth 2.0 token answer keeps the tokens and names the user.
    public var tokenAnswer = TokenAnswerLayout()
    /// How the user endpoint is called, when the token answer does not name the user.
    public var userRequest = UserInfoRequest()
    /// How the token endpoint wants its body (Notion and Atlassian: JSON).
    public var tokenRequestFormat: ProviderRequestFormat = .form
    /// Where refresh requests go when not to the token endpoint (Figma's `oauth/refresh`).
    public var refreshURL: String? = nil
    /// Whether every refresh answer carries the next refresh token and spends the one presented (RFC 9700 §4.14.2).
    public var refreshTokenRotates: Bool = false
    /// The authorize parameter that carries the scopes: `scope` (RFC 6749 §3.3), or Slack's `user_scope` for a user token.
    public var scopeParameter: String = "scope"
    /// How the revocation request carries the token.
    public var revocationStyle: RevocationStyle = .form
    /// Whether revocation names the access token even when the account holds a refresh token (Twitch, Zoom and Slack revoke access tokens).
    public var revokesAccessToken: Bool = false
    /// Whether a revocation without client authentication still sends `client_id` (Twitch).
    public var revokeSendsClientID: Bool = false
    /// For an `oidc` provider, what the operator decided that the discovery document would otherwise decide, and what its preset knows of its ID tokens.
    public var oidcOptions = OIDCOptions()
    /// Seconds before expiry from which this provider's accounts are refreshed (`refresh_margin`); nil takes
    /// `BROKER_REFRESH_MARGIN`. Never more than half a token's lifetime is used (``RefreshTiming``).
    public var refreshMargin: Double? = nil
    /// The lifetime in seconds given to an access token whose answer has no `expires_in` (`default_expires_in`);
    /// nil leaves such a token without expiry, refreshed only on request.
    public var defaultExpiresIn: Int? = nil
    /// Header fields added to every call to this provider, replacing the broker's own of the same name (Notion's `Notion-Version`, Reddit's `User-Agent`).
    public var requestHeaders: [(String, String)] = []
    /// Documents fetched with a new account's access token and kept with it under `raw` (`resource_urls`; Atlassian's sites).
    public var resourceLookups: [ResourceLookup] = []
    /// The grants the broker uses with this provider: people's sign-in unless the providers file says otherwise.
    public var grants: ProviderGrants = .authorizationCode
    /// How the provider adds scopes to an existing grant, for step-up flows (``ScopeUpgrade``).
    public var scopeUpgrade = ScopeUpgrade()
    /// The scopes a flow may ask for itself (`scopes` of `/authorize`, connect sessions, step-up); nil allows any.
    public var allowedScopes: [String]? = nil
    /// For an `api_key`, `basic` or `bearer` provider, the fields people enter, where calls carry them and how they are
    /// verified; nil for the kinds that sign in.
    public var credentials: CredentialScheme? = nil
    /// The values each account gives for the provider's URLs (``AccountSetting``: `{subdomain}`, `{shop}`); empty for
    /// most providers.
    public var accountSettings: [AccountSetting] = []
    /// Where each account's token answer names its API base (Salesforce's `instance_url`), used by the proxy when
    /// the provider has no `apiBaseURL`; nil for none.
    public var apiBaseFromTokenAnswer: TokenAnswerAPIBase? = nil

    /// Whether people can connect accounts of this provider: it is configured and has a sign-in.
    public var offersSignIn: Bool { grants.contains(.authorizationCode) && isConfigured }

    /// Creates a configuration; everything but the name and kind defaults to absent or the OAuth 2.0 norm.
    public init(
        name: String,
        kind: ProviderKind,
        clientID: String? = nil,
        clientSecret: Secret? = nil,
        authorizeURL: String? = nil,
        tokenURL: String? = nil,
        userURL: String? = nil,
        userIDFields: [String] = [],
        userTokenParameter: String? = nil,
        revokeURL: String? = nil,
        revokeTokenParameter: String = "token",
        revokeAuthenticatesClient: Bool = true,
        scopes: [String] = [],
        scopeSeparator: String = " ",
        pkce: Bool = false,
        extraAuthorizeParameters: [(String, String)] = [],
        clientAuthentication: ClientAuthentication = .clientSecretPost,
        requestTokenURL: String? = nil,
        accessTokenURL: String? = nil,
        apiKey: Secret? = nil,
        apiBaseURL: String? = nil,
        authenticateURL: String? = nil,
        settingNames: [String: String] = [:],
        displayName: String? = nil
    ) {
        self.name = name
        self.kind = kind
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.authorizeURL = authorizeURL
        self.tokenURL = tokenURL
        self.userURL = userURL
        self.userIDFields = userIDFields
        self.userTokenParameter = userTokenParameter
        self.revokeURL = revokeURL
        self.revokeTokenParameter = revokeTokenParameter
        self.revokeAuthenticatesClient = revokeAuthenticatesClient
        self.scopes = scopes
        self.scopeSeparator = scopeSeparator
        self.pkce = pkce
        self.extraAuthorizeParameters = extraAuthorizeParameters
        self.clientAuthentication = clientAuthentication
        self.requestTokenURL = requestTokenURL
        self.accessTokenURL = accessTokenURL
        self.apiKey = apiKey
        self.apiBaseURL = apiBaseURL
        self.authenticateURL = authenticateURL
        self.settingNames = settingNames
        self.displayName = displayName
    }

    /// The settings this provider still needs, as the operator names them (`WEIBO_CLIENT_ID`, `token_url`); empty when configured.
    ///
    /// The kind's settings type (``OAuth2Settings``, ``OAuth1Settings``,
    /// ``TMDBSettings``) holds the rule; this reads it without building one.
    public var missingSettings: [String] {
        missingSettingKeys.map { settingNames[$0] ?? $0 }
    }

    /// Whether every setting the provider's grants need is present.
    public var isConfigured: Bool { missingSettingKeys.isEmpty }

    /// The providers-file keys of the settings the provider's grants need and it lacks: its kind's sign-in, then the client credentials grant's.
    var missingSettingKeys: [String] {
        var keys = grants.contains(.authorizationCode) ? ExchangeRegistry.missingKeys(in: self) : []
        if grants.contains(.clientCredentials) {
            for key in ClientCredentialsSettings.missingKeys(in: self) where !keys.contains(key) { keys.append(key) }
        }
        return keys
    }
}

/// Where an OAuth 2.0 provider's API takes the access token when not as `Authorization: Bearer` (RFC 6750 §2.1):
/// Shopify's Admin API reads `X-Shopify-Access-Token: <token>`.
public struct APITokenHeader: Sendable, Equatable {
    /// The header field name, an RFC 9110 §5.6.2 token.
    public var name: String
    /// The field value with `{access_token}` exactly once where the token goes (`{access_token}`, `token {access_token}`).
    public var format: String
    /// The placeholder a format holds once.
    public static let placeholder = "{access_token}"

    public init(name: String, format: String) {
        self.name = name
        self.format = format
    }

    /// The field value for `token`: the format with its placeholder replaced.
    public func value(_ token: String) -> String { format.replacingOccurrences(of: Self.placeholder, with: token) }
}
