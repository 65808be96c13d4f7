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
///
/// The id is held once, as the string every store, cookie and URL uses, so
/// passing, comparing and hashing one costs no more than the string itself and
/// ``string`` builds nothing; ``provider`` and ``uid`` are split off on demand.
public struct AccountID: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// `provider:uid`, the key of the account in every store, cookie and URL, byte for byte.
    public let string: String

    /// The id of `uid` at `provider`.
    public init(provider: String, uid: String) {
        string = provider + ":" + uid
    }

    /// `id` unchanged, when it has a `:` byte to split at; nil when it has none.
    ///
    /// `AccountID(id)?.string` has the bytes of `id`; an id built from a
    /// provider that contains `:` splits at that `:` instead, which no
    /// configured provider can cause.
    public init?(_ id: String) {
        var bytes = id
        // Through the contiguous UTF-8: every `GET /account` parses the id it is asked for.
        guard bytes.withUTF8({ $0.contains(UInt8(ascii: ":")) }) else { return nil }
        string = id
    }

    /// A literal id such as `"github:42"` (or `"github:\(uid)"`), for tests and fixed ids; one without `:` is a programming error.
    ///
    /// `AccountID("github:42")` with a literal argument is this initializer too (SE-0213), not the failable one:
    /// parse text that came from outside through a `String` value.
    public init(stringLiteral value: String) {
        precondition(value.utf8.contains(UInt8(ascii: ":")), "an account id literal needs a ':': \(value)")
        string = value
    }

    /// The provider key, for example `github`: the bytes before the first `:`.
    public var provider: String {
        let bytes = string.utf8
        let colon = bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.endIndex
        return String(decoding: bytes[..<colon], as: UTF8.self)
    }

    /// The user's id at the provider, byte for byte as reported: the bytes after the first `:`.
    public var uid: String {
        let bytes = string.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return "" }
        return String(decoding: bytes[bytes.index(after: colon)...], as: UTF8.self)
    }

    /// ``string``.
    public var description: String { string }

    /// Whether both ids have the same bytes.
    public static func == (lhs: AccountID, rhs: AccountID) -> Bool {
        ExactKey.same(lhs.string, rhs.string)
    }

    /// Byte order of the ids, the order every listing and page uses.
    public static func < (lhs: AccountID, rhs: AccountID) -> Bool {
        ExactKey.precedes(lhs.string, rhs.string)
    }

    /// Hashes the bytes, so canonically equivalent spellings land apart.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactKey(string))
    }
}

/// An id is stored and sent as its ``AccountID/string``, so a record that held a `String` id reads back unchanged.
extension AccountID: Codable {
    /// Reads the id from a JSON string; one without `:` is not an account id.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = AccountID(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an account id (provider:uid)")
        }
        self = id
    }

    /// Writes ``string``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }
}
