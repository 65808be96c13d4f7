/// How a proxied request carries the account's credential to the provider's API.
///
/// The credential itself never leaves the broker towards the caller: it is written into the outbound request only
/// (``ProxyOutbound``), and a response field echoing it is dropped (``ProxyHeaders/response(_:secrets:)``).
public struct ProxyCredentialPlacement: Sendable, Equatable {
    /// Where the account's token goes.
    public enum Token: Sendable, Equatable {
        /// `Authorization: Bearer <access token>` (RFC 6750 §2.1), the OAuth 2.0 norm.
        case bearer
        /// `<name>=<access token>` appended to the query (RFC 6750 §2.3; Weibo's `access_token`).
        case queryParameter(String)
        /// The access token in a header field the provider names, its value a format holding `{access_token}` once
        /// (`api_token_header`, `api_token_format`; Shopify's `X-Shopify-Access-Token: <token>`); no `Authorization`.
        case header(APITokenHeader)
        /// An RFC 5849 §3.5.1 `Authorization: OAuth …` header signed with the consumer and token credentials.
        case oauth1Signature
        /// TMDB v3: `session_id=<session>` in the query, and the application's key as `api_key=<key>` in the query or,
        /// for an API Read Access Token, as `Authorization: Bearer <token>` (as ``TMDBClient`` sends it).
        case tmdbSession
        /// An entered credential (`api_key`, `basic`, `bearer`) placed as its provider declares
        /// (``CredentialScheme/Placement``).
        case entered(CredentialScheme.Placement)
    }

    /// Where the account's token goes.
    public var token: Token
    /// A header field set to the client id on every call (Twitch Helix's `Client-Id`), or nil.
    public var clientIDHeader: String?
    /// Fields the provider wants on every call (Notion's `Notion-Version`, Reddit's `User-Agent`); they replace a
    /// caller's field of the same name. These are the provider's `request_headers`, checked when the file is read.
    public var headers: [(String, String)]
    /// An entered credential's further header fields (``CredentialScheme/additionalHeaders``), filled in per call.
    public var enteredHeaders: [CredentialScheme.HeaderField] = []

    /// Creates a placement; by default a Bearer token and nothing else.
    public init(token: Token = .bearer, clientIDHeader: String? = nil, headers: [(String, String)] = []) {
        self.token = token
        self.clientIDHeader = clientIDHeader
        self.headers = headers
    }

    /// How `provider`'s calls carry the credential: by its kind (OAuth 1.0a signs, TMDB names the session, OAuth 2.0
    /// and OpenID Connect send a Bearer token), its `api_token_param` or `api_token_header`, `api_client_id_header` and `request_headers`.
    public init(provider: ProviderConfiguration) {
        let token: Token =
            switch provider.kind {
            case .oauth1: .oauth1Signature
            case .tmdb: .tmdbSession
            case .oauth2, .oidc:
                provider.apiTokenParameter.map(Token.queryParameter) ?? provider.apiTokenHeader.map(Token.header) ?? .bearer
            // MCP authorization: the token as Bearer on every request, never in the query string.
            case .mcp: .bearer
            case .apiKey, .basic, .bearer:
                .entered(provider.credentials?.placement ?? CredentialScheme.defaults(for: provider.kind)?.placement ?? .basic)
            }
        self.init(token: token, clientIDHeader: provider.apiClientIDHeader, headers: provider.requestHeaders)
        if provider.kind.holdsEnteredCredentials { enteredHeaders = provider.credentials?.additionalHeaders ?? [] }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.token == rhs.token && lhs.clientIDHeader == rhs.clientIDHeader && lhs.enteredHeaders == rhs.enteredHeaders
            && lhs.headers.map(\.0) == rhs.headers.map(\.0) && lhs.headers.map(\.1) == rhs.headers.map(\.1)
    }
}

/// The secrets and identifiers a placement may write: the account's tokens and the provider's client credentials.
///
/// Printing it shows no secret (each is a ``Secret``).
public struct ProxyCredential: Sendable {
    /// The access token (OAuth 2.0), token credential (OAuth 1.0a `oauth_token`) or TMDB session id.
    public var accessToken: Secret
    /// The OAuth 1.0a token secret.
    public var tokenSecret: Secret?
    /// The OAuth 2.0 client id or OAuth 1.0a consumer key.
    public var clientID: String?
    /// The OAuth 1.0a consumer secret (OAuth 2.0 calls never carry the client secret).
    public var clientSecret: Secret?
    /// TMDB's application key: a v3 key or an API Read Access Token.
    public var apiKey: Secret?
    /// The entered credential of an `api_key`, `basic` or `bearer` account; nil for the kinds that sign in.
    public var entered: CredentialValues?

    /// Creates the credential from its parts.
    public init(
        accessToken: Secret, tokenSecret: Secret? = nil, clientID: String? = nil, clientSecret: Secret? = nil, apiKey: Secret? = nil
    ) {
        self.accessToken = accessToken
        self.tokenSecret = tokenSecret
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.apiKey = apiKey
    }

    /// The credential of `account` at `provider`.
    public init(account: Account, provider: ProviderConfiguration) {
        self.init(
            accessToken: account.accessToken, tokenSecret: account.tokenSecret, clientID: provider.clientID,
            clientSecret: provider.clientSecret, apiKey: provider.apiKey)
        if provider.kind.holdsEnteredCredentials { entered = CredentialValues(stored: account.accessToken) }
    }

    /// Every secret value, for ``ProxyHeaders/response(_:secrets:)`` to look for in the provider's answer.
    public var secretValues: [String] {
        // Appended one by one into one array (a list of optionals to compact was a second array and generic calls,
        // on every proxied answer).
        var values: [String] = []
        values.reserveCapacity(4)
        values.append(accessToken.value)
        if let tokenSecret { values.append(tokenSecret.value) }
        if let clientSecret { values.append(clientSecret.value) }
        if let apiKey { values.append(apiKey.value) }
        if let entered {
            values += entered.secretValues
            // A provider echoing the Authorization field would show the encoded pair.
            if let basic = ProxyOutbound.basicCredentials(entered) { values.append(basic) }
        }
        return values
    }
}
