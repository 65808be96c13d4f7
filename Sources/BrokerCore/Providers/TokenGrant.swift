/// What a provider's token endpoint granted: the tokens and what it said about them.
public struct TokenGrant: Sendable, Equatable {
    /// The access token.
    public var accessToken: Secret
    /// The token type, usually `bearer` (compared case-insensitively, RFC 6749 §5.1).
    public var tokenType: String?
    /// The granted scope, when the provider reported one.
    public var scope: String?
    /// The refresh token, when one was issued.
    public var refreshToken: Secret?
    /// The OAuth 1.0a token secret.
    public var tokenSecret: Secret?
    /// The lifetime of the access token in seconds, from when the response was generated: 0…``maximumLifetime``.
    public var expiresIn: Int?
    /// The user's id when the token response carries it (Weibo `uid`, Twitter `user_id`).
    public var uid: String?
    /// The user's display name when the token response carries it (Twitter `screen_name`).
    public var screenName: String?
    /// The refresh token's lifetime in seconds (`refresh_token_expires_in`, GitHub Apps): 0…``maximumLifetime``.
    public var refreshTokenExpiresIn: Int?
    /// The OpenID Connect `id_token` of the answer, when it sent one that is a string a header could carry.
    public var idToken: Secret?
    /// The answer's other top-level fields as a JSON object's text (``TokenExtras``), without `id_token`; nil when none.
    public var extras: String?
    /// Whether the answer's other fields were over ``TokenExtras/maximumBytes`` and so were dropped, `id_token` too.
    public var extrasDropped: Bool = false
    /// Members of the account's kept fields that stand when a refresh answer omits them: the provider's ``ResourceLookup`` names.
    public var extrasKeptAcrossRefresh: [String] = []
    /// Whether a refresh answer without a new refresh token spent the one presented, so none is kept (rotating providers).
    public var presentedRefreshTokenSpent: Bool = false

    /// The longest lifetime kept, ten years in seconds; longer ones are clamped to it where they enter.
    public static let maximumLifetime = 315_360_000

    /// Creates a grant; optional fields default to absent.
    public init(
        accessToken: Secret,
        tokenType: String? = nil,
        scope: String? = nil,
        refreshToken: Secret? = nil,
        tokenSecret: Secret? = nil,
        expiresIn: Int? = nil,
        uid: String? = nil,
        screenName: String? = nil,
        refreshTokenExpiresIn: Int? = nil,
        idToken: Secret? = nil,
        extras: String? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.scope = scope
        self.refreshToken = refreshToken
        self.tokenSecret = tokenSecret
        self.expiresIn = expiresIn
        self.uid = uid
        self.screenName = screenName
        self.refreshTokenExpiresIn = refreshTokenExpiresIn
        self.idToken = idToken
        self.extras = extras
    }
}
