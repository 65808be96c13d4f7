import Foundation

/// One user's authorization at one provider, stored under the id `provider:uid`.
///
/// Authorizing the same user at the same provider again yields the same id,
/// so the repository updates the existing record instead of adding one.
public struct Account: Sendable, Equatable {
    /// The provider key, for example `github`.
    public var provider: String
    /// The user's id at the provider, as the provider reports it.
    public var uid: String
    /// The access token.
    public var accessToken: Secret
    /// The token type the provider named, usually `bearer`.
    public var tokenType: String?
    /// The granted scope, as the provider reported it.
    public var scope: String?
    /// The refresh token, when the provider issued one.
    public var refreshToken: Secret?
    /// The OAuth 1.0a token secret.
    public var tokenSecret: Secret?
    /// A human-readable user name, when the provider reports one.
    public var screenName: String?
    /// When the access token expires; nil when the provider gave no lifetime.
    public var expiresAt: Date?
    /// When the account was first authorized.
    public var createdAt: Date
    /// When the record last changed.
    public var updatedAt: Date
    /// When the access token was last refreshed.
    public var refreshedAt: Date?
    /// Whether the tokens are usable or the user must authorize again.
    public var status: AccountStatus
    /// When the current access token was issued (the broker's clock when the answer came); nil in records
    /// written before it was kept, where ``tokenIssuedAt`` stands in.
    public var issuedAt: Date?
    /// When the refresh token lapses unless used, from the answer's `refresh_token_expires_in`; nil when unknown.
    public var refreshTokenExpiresAt: Date?
    /// The OpenID Connect ID token from the token answer, kept as a secret (sealed at rest like the tokens).
    public var idToken: Secret?
    /// The token answer's other top-level fields (``TokenExtras``), as a JSON object's text; never a token.
    public var extras: String?
    /// The user of the back end the account belongs to, as `POST /authorize` named them; nil when none was given.
    public var endUser: EndUser?
    /// The back end's labels on the account (``AccountTags``); empty when none were given.
    public var tags: [String: String]
    /// The provider's per-account settings (``AccountSetting``: a Shopify shop, a Zendesk subdomain), filled into its
    /// URLs as `{name}`; empty for a provider without settings and in records of earlier versions.
    public var settings: [String: String]
    /// The back end's free JSON object on the account (`PATCH /account`'s `metadata`), as its compact text, at most
    /// ``AccountMetadata/maximumBytes``; nil when none was set.
    public var metadata: String?

    /// The repository key: `provider:uid`, as ``AccountID`` builds it.
    public var id: String { accountID.string }

    /// The repository key as a typed id, `provider:uid`.
    public var accountID: AccountID { AccountID(provider: provider, uid: uid) }

    /// Creates an account; optional fields default to absent and the status to active.
    public init(
        provider: String,
        uid: String,
        accessToken: Secret,
        tokenType: String? = nil,
        scope: String? = nil,
        refreshToken: Secret? = nil,
        tokenSecret: Secret? = nil,
        screenName: String? = nil,
        expiresAt: Date? = nil,
        createdAt: Date,
        updatedAt: Date,
        refreshedAt: Date? = nil,
        status: AccountStatus = .active,
        issuedAt: Date? = nil,
        refreshTokenExpiresAt: Date? = nil,
        idToken: Secret? = nil,
        extras: String? = nil,
        endUser: EndUser? = nil,
        tags: [String: String] = [:],
        settings: [String: String] = [:],
        metadata: String? = nil
    ) {
        self.provider = provider
        self.uid = uid
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.scope = scope
        self.refreshToken = refreshToken
        self.tokenSecret = tokenSecret
        self.screenName = screenName
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.refreshedAt = refreshedAt
        self.status = status
        self.issuedAt = issuedAt
        self.refreshTokenExpiresAt = refreshTokenExpiresAt
        self.idToken = idToken
        self.extras = extras
        self.endUser = endUser
        self.tags = tags
        self.settings = settings
        self.metadata = metadata
    }

    /// When the current access token was issued: ``issuedAt``, else (records of earlier versions) `refreshed_at`,
    /// else `updated_at`, which every write of a new token sets. Not `created_at`: a re-authorization keeps it.
    public var tokenIssuedAt: Date { issuedAt ?? refreshedAt ?? updatedAt }

    /// Whether the access token has expired at `now`; a token without an expiry never does.
    public func isExpired(at now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt <= now
    }

    /// The expiry of a token issued at `issuedAt` that lives `expiresIn` seconds, or nil without a lifetime.
    ///
    /// RFC 6749 §5.1: `expires_in` is the lifetime in seconds from the time the
    /// response was generated; the caller passes its own (injected) clock reading.
    /// The lifetime is held to 0…``TokenGrant/maximumLifetime`` here too, so no caller can build a date
    /// that the record format cannot write.
    public static func expiry(issuedAt: Date, expiresIn: Int?) -> Date? {
        guard let expiresIn else { return nil }
        return issuedAt.addingTimeInterval(TimeInterval(min(max(0, expiresIn), TokenGrant.maximumLifetime)))
    }
}
