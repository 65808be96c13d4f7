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
        screenName: String? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.scope = scope
        self.refreshToken = refreshToken
        self.tokenSecret = tokenSecret
        self.expiresIn = expiresIn
        self.uid = uid
        self.screenName = screenName
    }
}
