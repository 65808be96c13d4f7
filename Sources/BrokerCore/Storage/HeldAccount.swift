import Foundation

/// An account as a store holds it in memory, for a read that needs only some of its fields: `GET /account`'s inline
/// path (the token, its expiry and type, the ids, the status and the fields its answer and audit line name).
///
/// The file store hands out the compact form its index keeps (``CompactAccount``), copied once, instead of
/// building a whole ``Account`` (about 400 bytes, copied and destroyed field by field) on every read; a store that
/// holds ``Account`` values wraps one (``init(_:)``). ``account`` builds the whole account for what needs more.
public struct HeldAccount: Sendable {
    /// The fields, in the file store's compact form.
    package let compact: CompactAccount

    /// `account`, compacted: its out-of-line fields in a new ``CompactAccount/Shared`` that holds the same strings.
    public init(_ account: Account) {
        compact = CompactAccount(account)
    }

    /// The account a store's index holds.
    package init(compact: CompactAccount) {
        self.compact = compact
    }

    /// The whole account, as ``ImmediateAccountReading/getNow(id:)`` answers it.
    public var account: Account { compact.account }

    /// ``Account/provider``.
    public var provider: String { compact.provider }
    /// ``Account/uid``.
    public var uid: String { compact.uid }
    /// ``Account/accessToken``.
    public var accessToken: Secret { compact.accessToken }
    /// ``Account/tokenSecret``.
    public var tokenSecret: Secret? { compact.sharedFields?.tokenSecret }
    /// ``Account/idToken``.
    public var idToken: Secret? { compact.sharedFields?.idToken }
    /// ``Account/extras``.
    public var extras: String? { compact.sharedFields?.extras }
    /// ``Account/status``.
    public var status: AccountStatus { compact.status }
    /// ``Account/expiresAt``.
    public var expiresAt: Date? { compact.expiry }
    /// ``Account/refreshTokenExpiresAt``.
    public var refreshTokenExpiresAt: Date? { compact.sharedFields?.refreshTokenExpiresAt }
    /// The id of ``Account/endUser``.
    public var endUserID: String? { compact.endUserID }

    /// What a reader kept beside this version of the account (``ImmediateAccountReading/keepMemo(_:for:)``), if any.
    package var memo: (any AnyObject & Sendable)? { compact.memo }

    /// ``Account/isExpired(at:)``.
    public func isExpired(at now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt <= now
    }
}
