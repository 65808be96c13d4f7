import Foundation

/// The `data` object of a webhook event: what the back end needs to act, and never a token, secret or code.
///
/// Fields that do not apply to an event type are left out of its JSON.
/// `endUserID` and `tags` are the end user an account belongs to and the
/// labels put on it (an object of strings), taken from the account.
public struct BrokerEventData: Sendable, Equatable {
    /// The account's id, `provider:uid`; nil for a sign-in that failed before any account existed.
    public var accountID: AccountID?
    /// The provider's name.
    public var provider: String
    /// The user's id at the provider, when known.
    public var uid: String?
    /// The end user of the back end the account belongs to, when the account has one.
    public var endUserID: String?
    /// Labels the back end put on the account; nil when it has none.
    public var tags: [String: String]?
    /// `active`, `reauthorization_required`, `refresh_exhausted` or `deleted`.
    public var status: String?
    /// When the access token expires; nil when it does not, or for events without an account.
    public var expiresAt: Date?
    /// For `account.deleted`: whether the provider confirmed the revocation (false also when it offers none).
    public var revoked: Bool?
    /// For `flow.failed` and `account.refresh_failed`: the broker's error code, such as `access_denied` or `upstream_timeout`.
    public var error: String?
    /// A sentence about the error, as the API would give it; never a provider body or secret.
    public var message: String?
    /// For `account.refresh_failed`: when the broker tries again.
    public var nextRetryAt: Date?
    /// The flow's state, in `flow.completed` and `flow.failed`.
    public var state: String?
    /// For `account.refresh_exhausted` and `account.recovered`: when the run of failed refreshes began, when known.
    public var failingSince: Date?
    /// For `account.updated`: the account's `metadata` object after the change, when it has one.
    public var metadata: JSONValue?

    /// Creates data for an event about `provider`; every other field starts absent.
    public init(provider: String) {
        self.provider = provider
    }

    /// The data of an event about `account`, with its status as `status` (default: the account's own).
    public init(account: Account, status: String? = nil) {
        provider = account.provider
        accountID = account.accountID
        uid = account.uid
        self.status = status ?? account.status.rawValue
        expiresAt = account.expiresAt
        endUserID = account.endUser?.id
        tags = account.tags.isEmpty ? nil : account.tags
    }
}

extension BrokerEventData: Encodable {
    private enum CodingKeys: String, CodingKey {
        case accountID = "account_id"
        case provider, uid
        case endUserID = "end_user_id"
        case tags, status
        case expiresAt = "expires_at"
        case revoked, error, message
        case nextRetryAt = "next_retry_at"
        case state
        case failingSince = "failing_since"
        case metadata
    }

    /// Writes the fields that are set; dates as RFC 3339 text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(accountID?.string, forKey: .accountID)
        try container.encode(provider, forKey: .provider)
        try container.encodeIfPresent(uid, forKey: .uid)
        try container.encodeIfPresent(endUserID, forKey: .endUserID)
        try container.encodeIfPresent(tags, forKey: .tags)
        try container.encodeIfPresent(status, forKey: .status)
        // An account's expiry is always written, null when the token does not expire.
        if accountID != nil { try container.encode(expiresAt.map(RFC3339Date.format), forKey: .expiresAt) }
        try container.encodeIfPresent(revoked, forKey: .revoked)
        try container.encodeIfPresent(error, forKey: .error)
        try container.encodeIfPresent(message, forKey: .message)
        try container.encodeIfPresent(nextRetryAt.map(RFC3339Date.format), forKey: .nextRetryAt)
        try container.encodeIfPresent(state, forKey: .state)
        try container.encodeIfPresent(failingSince.map(RFC3339Date.format), forKey: .failingSince)
        try container.encodeIfPresent(metadata, forKey: .metadata)
    }
}
