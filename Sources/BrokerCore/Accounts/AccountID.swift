/// An account's id, `provider:uid`: the one place an id is built from its parts or split into them.
///
/// Provider names never contain `:` (they are `a-z`, `0-9`, `-` and `_`), so an
/// id splits at its first `:`; the uid is whatever the provider reported and
/// may contain `:` itself. Both directions work on UTF-8 bytes, like
/// ``ExactKey``: building concatenates the bytes unchanged, and splitting looks
/// for the byte `:`, because Swift's `Character` view does not see a `:` that a
/// combining mark follows (`:` + U+0301 is one `Character`). Equality and
/// hashing compare bytes, so canonically equivalent uids are different ids.
/// Either part may be empty; what a valid uid is, ``ProviderUserID`` decides.
public struct AccountID: Hashable, Sendable, CustomStringConvertible {
    /// The provider key, for example `github`.
    public let provider: String
    /// The user's id at the provider, byte for byte as reported.
    public let uid: String

    /// The id of `uid` at `provider`.
    public init(provider: String, uid: String) {
        self.provider = provider
        self.uid = uid
    }

    /// `id` split at its first `:` byte; nil when it has none.
    ///
    /// `AccountID(id)?.string` has the bytes of `id`; an id built from a
    /// provider that contains `:` splits at that `:` instead, which no
    /// configured provider can cause.
    public init?(_ id: String) {
        let bytes = id.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        provider = String(decoding: bytes[..<colon], as: UTF8.self)
        uid = String(decoding: bytes[bytes.index(after: colon)...], as: UTF8.self)
    }

    /// `provider:uid`, the key of the account in every store, cookie and URL.
    public var string: String {
        provider + ":" + uid
    }

    /// ``string``.
    public var description: String { string }

    /// Whether both parts have the same bytes.
    public static func == (lhs: AccountID, rhs: AccountID) -> Bool {
        ExactKey.same(lhs.provider, rhs.provider) && ExactKey.same(lhs.uid, rhs.uid)
    }

    /// Hashes the bytes of both parts, so canonically equivalent spellings land apart.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactKey(provider))
        hasher.combine(ExactKey(uid))
    }
}
