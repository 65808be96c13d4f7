import Foundation

/// A string compared, hashed and ordered by its exact UTF-8 bytes, for identities.
///
/// Swift's `String` equality is canonical equivalence: `café` spelled with
/// U+00E9 and with `e` + U+0301 are equal, and so are `K` and U+212A KELVIN
/// SIGN. Two users whose provider ids differ only that way are two users, so
/// every table keyed by an account id, uid, state or provider name keys by
/// this type instead, and ``same(_:_:)`` is the comparison for one-off checks.
public struct ExactKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The string as given.
    public let string: String

    /// Wraps `string` without changing a byte.
    public init(_ string: String) {
        self.string = string
    }

    /// Whether `lhs` and `rhs` have the same bytes.
    public static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
        same(lhs.string, rhs.string)
    }

    /// Byte order (which is also Unicode scalar order for valid UTF-8).
    public static func < (lhs: ExactKey, rhs: ExactKey) -> Bool {
        precedes(lhs.string, rhs.string)
    }

    /// Hashes the bytes, so canonically equivalent spellings land apart.
    public func hash(into hasher: inout Hasher) {
        var copy = string
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// The string itself.
    public var description: String { string }

    /// Whether `lhs` and `rhs` are the same bytes (not merely canonically equivalent).
    public static func same(_ lhs: String, _ rhs: String) -> Bool {
        // One `memcmp` over the contiguous UTF-8 (native strings, small ones copied to the stack), where the views'
        // `elementsEqual` steps byte by byte: every lookup in a table keyed by this type ends in this comparison.
        var left = lhs
        var right = rhs
        return left.withUTF8 { left in
            right.withUTF8 { right in
                left.count == right.count && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
    }

    /// Whether `lhs` sorts before `rhs` by bytes.
    public static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}
