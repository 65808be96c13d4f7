import BrokerCrypto

/// What an OAuth 2.0 provider must and may have, checked once: the client credentials and the two endpoints are never absent here.
///
/// Built from a ``ProviderConfiguration`` by ``init(_:)``, which refuses a
/// provider missing any of `client_id`, `client_secret`, `authorize_url` and
/// `token_url`, so the exchange and its client read no optionals at call time.
public struct OAuth2Settings: ProviderKindSettings, Sendable {
    /// The client id and secret and how they reach the token endpoint (RFC 6749 §2.3.1).
    public struct Credentials: Sendable {
        /// The client id.
        public let id: String
        /// The client secret.
        public let secret: Secret
        /// How the broker authenticates at the token endpoint.
        public let authentication: ClientAuthentication

        /// Adds the credentials the way ``authentication`` asks: form fields, or an HTTP Basic header.
        func add(to form: inout [(String, String)], headers: inout [(String, String)]) {
            switch authentication {
            case .clientSecretPost:
                form.append(("client_id", id))
                form.append(("client_secret", secret.value))
            case .clientSecretBasic:
                // RFC 6749 §2.3.1: the id and secret are form-encoded before they are joined and base64-encoded.
                let joined = PercentEncoding.rfc3986(id) + ":" + PercentEncoding.rfc3986(secret.value)
                headers.append(("Authorization", "Basic " + Base64.encode(Array(joined.utf8))))
            case .publicClient:
                // RFC 6749 §2.3.1 and §3.2.1: a public client names itself and proves nothing; PKCE guards its code.
                form.append(("client_id", id))
            }
        }
    }

    /// The provider key, for example `github`.
    public let name: String
    /// The client credentials.
    public let credentials: Credentials
    /// Where the browser is sent to authorize.
    public let authorizeURL: String
    /// The token endpoint.
    public let tokenURL: String
    /// Where refresh requests go: the token endpoint unless the provider has its own (Figma).
    public let refreshURL: String
    /// How the token endpoint wants its body.
    public let tokenRequestFormat: ProviderRequestFormat
    /// Where the token answer keeps the tokens and names the user.
    public let tokenAnswer: TokenAnswerLayout
    /// Whether every refresh answer carries the next refresh token and spends the one presented.
    public let refreshTokenRotates: Bool
    /// The endpoint that names the user when the token response does not; nil when the provider has none.
    public let userURL: String?
    /// The JSON paths of the stable user id in the user response, their values joined with `:`; `id` unless configured.
    public let userIDFields: [ProviderJSONPath]
    /// When set, the user endpoint gets the access token as this query parameter instead of a Bearer header.
    public let userTokenParameter: String?
    /// How the user endpoint is asked.
    public let userRequest: UserInfoRequest
    /// The revocation endpoint and how to call it; nil when the provider has none.
    public let revocation: OAuth2Revocation?
    /// The scopes requested at authorization.
    public let scopes: [String]
    /// What joins the scopes (RFC 6749 §3.3).
    public let scopeSeparator: String
    /// The authorize parameter carrying the scopes: `scope`, or Slack's `user_scope`.
    public let scopeParameter: String
    /// Whether to send a PKCE S256 challenge (RFC 7636).
    public let pkce: Bool
    /// Parameters added to every authorize URL, in order.
    public let extraAuthorizeParameters: [(String, String)]
    /// Parameters added to every token request (code exchange, refresh, device poll), in order: a remote MCP
    /// server's `resource` (RFC 8707 §2).
    public let extraTokenParameters: [(String, String)]
    /// Whether token requests must reach public addresses only (a discovered token endpoint).
    public let tokenEndpointPublicOnly: Bool
    /// Header fields added to every call to the provider, replacing the broker's own of the same name.
    public let requestHeaders: [(String, String)]
    /// The authorization server's issuer identifier (RFC 9207 §2); nil when unknown.
    public let issuer: String?
    /// Whether the provider puts `iss` in every authorization response (RFC 9207 §3).
    public let requiresIssuerParameter: Bool
    /// The lifetime given to an access token whose answer has no `expires_in`; nil leaves it without expiry.
    public let defaultExpiresIn: Int?
    /// Documents fetched with a new account's access token after the code exchange and kept under `raw`.
    public let resourceLookups: [ResourceLookup]
    /// The device authorization endpoint (RFC 8628 §3.1); nil when the provider offers no device sign-in.
    public let deviceAuthorizationURL: String?
    /// Whether a device answer's `verification_uri` may be `http:`.
    public let deviceAllowHTTP: Bool

    /// `base` with ``requestHeaders`` applied: a configured field replaces the one of the same name (compared case-insensitively), others are added.
    func headers(_ base: [(String, String)]) -> [(String, String)] {
        OAuth2Settings.merging(requestHeaders, into: base)
    }

    /// `base` with `extra` applied: a field of `extra` replaces the one of the same name in `base`, others are added.
    static func merging(_ extra: [(String, String)], into base: [(String, String)]) -> [(String, String)] {
        guard !extra.isEmpty else { return base }
        let replaced = Set(extra.map { $0.0.lowercased() })
        return base.filter { !replaced.contains($0.0.lowercased()) } + extra
    }

    /// Reads `provider` through `required`, the one statement of what OAuth 2.0 requires.
    package init(_ provider: ProviderConfiguration, reading required: inout RequiredSettings) {
        let credentials = Credentials(
            id: required.text("client_id", provider.clientID),
            // A public client has no secret to require.
            secret: provider.clientAuthentication == .publicClient
                ? provider.clientSecret ?? Secret("") : required.secret("client_secret", provider.clientSecret),
            authentication: provider.clientAuthentication)
        authorizeURL = required.text("authorize_url", provider.authorizeURL)
        tokenURL = required.text("token_url", provider.tokenURL)
        name = provider.name
        self.credentials = credentials
        refreshURL = provider.refreshURL ?? tokenURL
        tokenRequestFormat = provider.tokenRequestFormat
        tokenAnswer = provider.tokenAnswer
        refreshTokenRotates = provider.refreshTokenRotates
        userURL = provider.userURL
        userIDFields = (provider.userIDFields.isEmpty ? ["id"] : provider.userIDFields).map(ProviderJSONPath.init)
        userTokenParameter = provider.userTokenParameter
        userRequest = provider.userRequest
        revocation = OAuth2Revocation.of(provider, credentials: credentials)
        scopes = provider.scopes
        scopeSeparator = provider.scopeSeparator
        scopeParameter = provider.scopeParameter
        pkce = provider.pkce
        extraAuthorizeParameters = provider.extraAuthorizeParameters
        extraTokenParameters = provider.extraTokenParameters
        tokenEndpointPublicOnly = provider.tokenEndpointPublicOnly
        requestHeaders = provider.requestHeaders
        issuer = provider.issuer
        requiresIssuerParameter = provider.requiresIssuerParameter
        defaultExpiresIn = provider.defaultExpiresIn
        resourceLookups = provider.resourceLookups
        deviceAuthorizationURL = provider.deviceAuthorizationURL
        deviceAllowHTTP = provider.deviceAllowHTTP
    }
}
