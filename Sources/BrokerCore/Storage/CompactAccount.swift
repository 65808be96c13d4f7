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
        package let tokenType: String?
        package let scope: String?
        package let tokenSecret: Secret?
        package let screenName: String?
        package let refreshTokenExpiresAt: Date?
        package let idToken: Secret?
        package let extras: String?
        package let endUserEmail: String?
        package let endUserName: String?
        package let tags: [String: String]
        package let settings: [String: String]
        package let metadata: String?

        init(
            tokenType: String?, scope: String?, tokenSecret: Secret?, screenName: String?, refreshTokenExpiresAt: Date?,
            idToken: Secret?, extras: String?, endUserEmail: String?, endUserName: String?, tags: [String: String],
            settings: [String: String], metadata: String?
        ) {
            self.tokenType = tokenType
            self.scope = scope
            self.tokenSecret = tokenSecret
            self.screenName = screenName
            self.refreshTokenExpiresAt = refreshTokenExpiresAt
            self.idToken = idToken
            self.extras = extras
            self.endUserEmail = endUserEmail
            self.endUserName = endUserName
            self.tags = tags
            self.settings = settings
            self.metadata = metadata
        }

        /// Whether these are the out-of-line fields given, byte for byte (tags and settings only when there are none).
        func holds(
            tokenType: String?, scope: String?, tokenSecret: Secret?, screenName: String?, refreshTokenExpiresAt: Date?,
            idToken: Secret?, extras: String?, endUserEmail: String?, endUserName: String?, tags: [String: String],
            settings: [String: String], metadata: String?
        ) -> Bool {
            func same(_ lhs: String?, _ rhs: String?) -> Bool {
                switch (lhs, rhs) {
                case (nil, nil): true
                case (let lhs?, let rhs?): ExactKey.same(lhs, rhs)
                default: false
                }
            }
            return self.tags.isEmpty && tags.isEmpty && self.settings.isEmpty && settings.isEmpty
                && same(self.metadata, metadata) && same(self.tokenType, tokenType) && same(self.scope, scope)
                && self.tokenSecret == tokenSecret && same(self.screenName, screenName)
                && self.refreshTokenExpiresAt?.timeIntervalSinceReferenceDate.bitPattern
                    == refreshTokenExpiresAt?.timeIntervalSinceReferenceDate.bitPattern
                && self.idToken == idToken && same(self.extras, extras)
                && same(self.endUserEmail, endUserEmail) && same(self.endUserName, endUserName)
        }

        /// Whether an account with the out-of-line fields given has none of them, so it needs no object at all.
        static func isEmpty(
            tokenType: String?, scope: String?, tokenSecret: Secret?, screenName: String?, refreshTokenExpiresAt: Date?,
            idToken: Secret?, extras: String?, endUserEmail: String?, endUserName: String?, tags: [String: String],
            settings: [String: String], metadata: String?
        ) -> Bool {
            tokenType == nil && scope == nil && tokenSecret == nil && screenName == nil && refreshTokenExpiresAt == nil
                && idToken == nil && extras == nil && endUserEmail == nil && endUserName == nil && tags.isEmpty
                && settings.isEmpty && metadata == nil
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
    /// What a reader keeps beside this version of the account (``ImmediateAccountReading/keepMemo(_:for:)``): the
    /// rendering of `GET /account`'s body, found with the account in one look-up, in the same cache lines. Not part
    /// of the account; a write stores a new value, without it.
    package var memo: (any AnyObject & Sendable)?

    /// `account` compacted; its out-of-line fields are `reusing`'s when they are the same, so neighbours share one object.
    package init(_ account: consuming Account, reusing previous: Shared? = nil) {
        self.init(
            provider: account.provider, uid: account.uid, accessToken: account.accessToken, tokenType: account.tokenType,
            scope: account.scope, refreshToken: account.refreshToken, tokenSecret: account.tokenSecret,
            screenName: account.screenName, expiresAt: account.expiresAt, createdAt: account.createdAt,
            updatedAt: account.updatedAt, refreshedAt: account.refreshedAt, status: account.status, issuedAt: account.issuedAt,
            refreshTokenExpiresAt: account.refreshTokenExpiresAt, idToken: account.idToken, extras: account.extras,
            endUserID: account.endUser?.id, endUserEmail: account.endUser?.email, endUserName: account.endUser?.name,
            tags: account.tags, settings: account.settings, metadata: account.metadata, reusing: previous)
    }

    /// The account with these fields (those of ``Account``, the end user's spread out), compacted without building
    /// the ``Account`` first: the record scanner hands a million of them to the index at start-up, and the large
    /// value built and moved on once per record was a tenth of that time. `endUserEmail` and `endUserName` count only
    /// with an `endUserID`, as ``Account/endUser`` holds them.
    package init(
        provider: String, uid: String, accessToken: Secret, tokenType: String?, scope: String?, refreshToken: Secret?,
        tokenSecret: Secret?, screenName: String?, expiresAt: Date?, createdAt: Date, updatedAt: Date, refreshedAt: Date?,
        status: AccountStatus, issuedAt: Date?, refreshTokenExpiresAt: Date?, idToken: Secret?, extras: String?,
        endUserID: String?, endUserEmail: String?, endUserName: String?, tags: [String: String],
        settings: [String: String], metadata: String?, reusing previous: Shared? = nil
    ) {
        let endUserEmail = endUserID == nil ? nil : endUserEmail
        let endUserName = endUserID == nil ? nil : endUserName
        if Shared.isEmpty(
            tokenType: tokenType, scope: scope, tokenSecret: tokenSecret, screenName: screenName,
            refreshTokenExpiresAt: refreshTokenExpiresAt, idToken: idToken, extras: extras, endUserEmail: endUserEmail,
            endUserName: endUserName, tags: tags, settings: settings, metadata: metadata)
        {
            shared = nil
        } else if let previous,
            previous.holds(
                tokenType: tokenType, scope: scope, tokenSecret: tokenSecret, screenName: screenName,
                refreshTokenExpiresAt: refreshTokenExpiresAt, idToken: idToken, extras: extras, endUserEmail: endUserEmail,
                endUserName: endUserName, tags: tags, settings: settings, metadata: metadata)
        {
            shared = previous
        } else {
            shared = Shared(
                tokenType: tokenType, scope: scope, tokenSecret: tokenSecret, screenName: screenName,
                refreshTokenExpiresAt: refreshTokenExpiresAt, idToken: idToken, extras: extras, endUserEmail: endUserEmail,
                endUserName: endUserName, tags: tags, settings: settings, metadata: metadata)
        }
        var present: Present = []
        func seconds(_ date: Date?, _ bit: Present) -> Double {
            guard let date else { return 0 }
            present.insert(bit)
            return date.timeIntervalSinceReferenceDate
        }
        self.expiresAt = seconds(expiresAt, .expiresAt)
        self.refreshedAt = seconds(refreshedAt, .refreshedAt)
        self.issuedAt = seconds(issuedAt, .issuedAt)
        self.present = present
        self.createdAt = createdAt.timeIntervalSinceReferenceDate
        self.updatedAt = updatedAt.timeIntervalSinceReferenceDate
        self.status = status
        self.endUserID = endUserID
        self.refreshToken = refreshToken
        self.accessToken = accessToken
        self.uid = uid
        self.provider = provider
    }

    /// The out-of-line fields, to hand to the next account's ``init(_:reusing:)``.
    package var sharedFields: Shared? { shared }

    /// Whether a refresh token is held (a sealed account's placeholder counts).
    package var hasRefreshToken: Bool { refreshToken != nil }

    /// When the access token expires, as ``Account/expiresAt``.
    package var expiry: Date? { present.contains(.expiresAt) ? Date(timeIntervalSinceReferenceDate: expiresAt) : nil }

    /// The seconds since 2001 of ``Account/createdAt``, ``Account/updatedAt``, and of ``Account/expiresAt`` and
    /// ``Account/refreshedAt`` (nil when absent): the dates `GET /account` renders, as they are kept.
    package var renderedSeconds: (expiresAt: Double?, createdAt: Double, updatedAt: Double, refreshedAt: Double?) {
        (
            present.contains(.expiresAt) ? expiresAt : nil, createdAt, updatedAt,
            present.contains(.refreshedAt) ? refreshedAt : nil
        )
    }

    /// Whether `other` holds the very values this does, field for field, ``memo`` aside: each string and token the
    /// same storage (or the same inline bytes), the out-of-line fields the same object, each date and flag the same
    /// bits. Exact for a copy of an account while the copy lives, since the copy keeps that storage alive and no
    /// address is reused meanwhile; a write stores new values and fails it. It reads only the fields themselves, not
    /// what they point to: a read of one account among many waits for nothing more.
    package func sameBits(as other: borrowing CompactAccount) -> Bool {
        Self.sameBits(provider, other.provider) && Self.sameBits(uid, other.uid)
            && Self.sameBits(accessToken, other.accessToken) && Self.sameBits(refreshToken, other.refreshToken)
            && Self.sameBits(endUserID, other.endUserID) && shared === other.shared && status == other.status
            && present.rawValue == other.present.rawValue && createdAt.bitPattern == other.createdAt.bitPattern
            && updatedAt.bitPattern == other.updatedAt.bitPattern && expiresAt.bitPattern == other.expiresAt.bitPattern
            && refreshedAt.bitPattern == other.refreshedAt.bitPattern && issuedAt.bitPattern == other.issuedAt.bitPattern
    }

    /// Whether two values are the same bits (for a string, the same storage or the same inline bytes).
    private static func sameBits<T>(_ lhs: T, _ rhs: T) -> Bool {
        withUnsafeBytes(of: lhs) { left in
            withUnsafeBytes(of: rhs) { right in
                var offset = 0
                while offset + 8 <= left.count {
                    guard left.load(fromByteOffset: offset, as: UInt64.self) == right.load(fromByteOffset: offset, as: UInt64.self)
                    else { return false }
                    offset += 8
                }
                while offset < left.count {
                    guard left[offset] == right[offset] else { return false }
                    offset += 1
                }
                return true
            }
        }
    }

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
