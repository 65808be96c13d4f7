import Foundation

/// An access token the broker got for itself with the client credentials grant: one per provider and scope set.
///
/// It belongs to no user and is never an account: it is not listed, not
/// refreshed in the background and never shown on the connect page.
public struct AppToken: Sendable, Equatable {
    /// The provider that issued it.
    public var provider: String
    /// The scope set it was asked for, normalized (``AppTokenScope``); empty when none was asked.
    public var requestedScope: String
    /// The access token.
    public var accessToken: Secret
    /// The token type, usually `Bearer`.
    public var tokenType: String?
    /// The scope the provider granted, when it said (RFC 6749 §5.1); else nil.
    public var scope: String?
    /// When the provider issued it, by the broker's clock.
    public var issuedAt: Date
    /// When it expires; nil when the provider gave no lifetime.
    public var expiresAt: Date?

    /// Creates a token.
    public init(
        provider: String, requestedScope: String, accessToken: Secret, tokenType: String?, scope: String?, issuedAt: Date,
        expiresAt: Date?
    ) {
        self.provider = provider
        self.requestedScope = requestedScope
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.scope = scope
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    /// The key it is cached and locked under: the provider, `|`, and the normalized scope.
    ///
    /// Provider names never hold `|` (``ProvidersFile/isValidName(_:)``), so
    /// the first `|` always ends the provider.
    public var key: String { Self.key(provider: provider, scope: requestedScope) }

    /// The cache key of `provider` and the normalized `scope`.
    public static func key(provider: String, scope: String) -> String {
        provider + "|" + scope
    }

    /// Whether it has expired at `now`.
    public func isExpired(at now: Date) -> Bool {
        expiresAt.map { now >= $0 } ?? false
    }
}
