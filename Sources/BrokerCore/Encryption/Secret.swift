/// A value that must never appear in logs: its description, debug description and mirror are redacted.
///
/// Equality and hashing use the value's exact bytes (not Swift's canonical
/// equivalence), so secrets can be compared; only
/// ``value`` gives the plaintext, and only code that means to use it reads it.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The plaintext; read it only to send it where it belongs.
    public let value: String

    /// Wraps `value` so that printing it shows `<redacted>`.
    public init(_ value: String) {
        self.value = value
    }

    /// Whether both hold the same bytes.
    public static func == (lhs: Secret, rhs: Secret) -> Bool {
        ExactKey.same(lhs.value, rhs.value)
    }

    /// Hashes the bytes, consistent with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        ExactKey(value).hash(into: &hasher)
    }

    /// Always `<redacted>`.
    public var description: String { "<redacted>" }

    /// Always `<redacted>`.
    public var debugDescription: String { "<redacted>" }

    /// A mirror without children, so `dump` and reflection print only `<redacted>`.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: nil) }
}
