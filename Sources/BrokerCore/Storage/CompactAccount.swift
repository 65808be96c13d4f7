import Foundation

/// An account as the file store's index holds it in its array: the same fields as ``Account`` in about half the bytes.
///
/// A million accounts sit in one array, and at start-up the kernel zeroes
/// every page of it and each account is moved into it, so its size is a large
/// share of the time until ready. Dates are kept as their seconds (the `Double`
/// inside `Date`, unchanged) with one bit each for presence, instead of
/// 16-byte optionals; the fields most accounts share or lack (token type,
/// scope, the end user's email and name, tags, …) sit out of line in one
/// immutable ``Shared`` object, which consecutive accounts with the same such
/// fields share. ``account`` gives back the ``Account`` it was made from, field
/// for field and byte for byte.
package struct CompactAccount: Sendable {
    /// The fields most accounts lack or have in common with their neighbours, out of line.
    package final class Shared: Sendable {
        let tokenType: String?
        let scope: String?
        let tokenSecret: Secret?
        let screenName: String?
        let refreshTokenExpiresAt: Date?
        let idToken: Secret?
        let extras: String?
        let endUserEmail: String?
        let endUserName: String?
        let tags: [String: String]
        let settings: [String: String]
        let metadata: String?

        init(_ account: borrowing Account) {
            tokenType = account.tokenType
            scope = account.scope
            tokenSecret = account.tokenSecret
            screenName = account.screenName
            refreshTokenExpiresAt = account.refreshTokenExpiresAt
            idToken = account.idToken
            extras = account.extras
            endUserEmail = account.endUser?.email
            endUserName = account.endUser?.name
            tags = account.tags
            settings = account.settings
            metadata = account.metadata
        }

        /// Whether `account`'s out-of-line fields are these, byte for byte (tags only when there are none).
        func holds(_ account: borrowing Account) -> Bool {
            func same(_ lhs: String?, _ rhs: String?) -> Bool {
                switch (lhs, rhs) {
                case (nil, nil): true
                case (let lhs?, let rhs?): ExactKey.same(lhs, rhs)
                default: false
                }
            }
            return tags.isEmpty && account.tags.isEmpty && settings.isEmpty && account.settings.isEmpty
                && same(metadata, account.metadata) && same(tokenType, account.tokenType) && same(scope, account.scope)
                && tokenSecret == account.tokenSecret && same(screenName, account.screenName)
                && refreshTokenExpiresAt?.timeIntervalSinceReferenceDate.bitPattern
                    == account.refreshTokenExpiresAt?.timeIntervalSinceReferenceDate.bitPattern
                && idToken == account.idToken && same(extras, account.extras)
                && same(endUserEmail, account.endUser?.email) && same(endUserName, account.endUser?.name)
        }

        /// Whether an account has none of these fields, so it needs no object at all.
        static func isEmpty(_ account: borrowing Account) -> Bool {
            account.tokenType == nil && account.scope == nil && account.tokenSecret == nil && account.screenName == nil
                && account.refreshTokenExpiresAt == nil && account.idToken == nil && account.extras == nil
                && account.endUser?.email == nil && account.endUser?.name == nil && account.tags.isEmpty
                && account.settings.isEmpty && account.metadata == nil
        }
    }

    /// Which optional dates are present.
    private struct Present: OptionSet {
        let rawValue: UInt8
        static let expiresAt = Present(rawValue: 1 << 0)
        static let refreshedAt = Present(rawValue: 1 << 1)
        static let issuedAt = Present(rawValue: 1 << 2)
    }

    package private(set) var provider: String
    package private(set) var uid: String
    package private(set) var accessToken: Secret
    package private(set) var refreshToken: Secret?
    package private(set) var endUserID: String?
    /// The dates' seconds since 2001 (`timeIntervalSinceReferenceDate`); an absent one is 0 and its bit in ``present`` clear.
    private var createdAt: Double
    private var updatedAt: Double
    private var expiresAt: Double
    private var refreshedAt: Double
    private var issuedAt: Double
    private var shared: Shared?
    package private(set) var status: AccountStatus
    private var present: Present

    /// `account` compacted; its out-of-line fields are `reusing`'s when they are the same, so neighbours share one object.
    package init(_ account: consuming Account, reusing previous: Shared? = nil) {
        if Shared.isEmpty(account) {
            shared = nil
        } else if let previous, previous.holds(account) {
            shared = previous
        } else {
            shared = Shared(account)
        }
        var present: Present = []
        func seconds(_ date: Date?, _ bit: Present) -> Double {
            guard let date else { return 0 }
            present.insert(bit)
            return date.timeIntervalSinceReferenceDate
        }
        expiresAt = seconds(account.expiresAt, .expiresAt)
        refreshedAt = seconds(account.refreshedAt, .refreshedAt)
        issuedAt = seconds(account.issuedAt, .issuedAt)
        self.present = present
        createdAt = account.createdAt.timeIntervalSinceReferenceDate
        updatedAt = account.updatedAt.timeIntervalSinceReferenceDate
        status = account.status
        endUserID = account.endUser?.id
        refreshToken = account.refreshToken
        accessToken = account.accessToken
        uid = account.uid
        provider = account.provider
    }

    /// The out-of-line fields, to hand to the next account's ``init(_:reusing:)``.
    package var sharedFields: Shared? { shared }

    /// Whether a refresh token is held (a sealed account's placeholder counts).
    package var hasRefreshToken: Bool { refreshToken != nil }

    /// When the access token expires, as ``Account/expiresAt``.
    package var expiry: Date? { present.contains(.expiresAt) ? Date(timeIntervalSinceReferenceDate: expiresAt) : nil }

    /// The account, as it was given.
    package var account: Account {
        func date(_ seconds: Double, _ bit: Present) -> Date? {
            present.contains(bit) ? Date(timeIntervalSinceReferenceDate: seconds) : nil
        }
        return Account(
            provider: provider, uid: uid, accessToken: accessToken, tokenType: shared?.tokenType, scope: shared?.scope,
            refreshToken: refreshToken, tokenSecret: shared?.tokenSecret, screenName: shared?.screenName,
            expiresAt: date(expiresAt, .expiresAt), createdAt: Date(timeIntervalSinceReferenceDate: createdAt),
            updatedAt: Date(timeIntervalSinceReferenceDate: updatedAt), refreshedAt: date(refreshedAt, .refreshedAt),
            status: status, issuedAt: date(issuedAt, .issuedAt), refreshTokenExpiresAt: shared?.refreshTokenExpiresAt,
            idToken: shared?.idToken, extras: shared?.extras,
            endUser: endUserID.map { EndUser(id: $0, email: shared?.endUserEmail, name: shared?.endUserName) },
            tags: shared?.tags ?? [:], settings: shared?.settings ?? [:], metadata: shared?.metadata)
    }
}
