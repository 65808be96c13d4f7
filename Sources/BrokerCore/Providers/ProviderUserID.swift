/// The rules a provider's user id must meet before it becomes part of an account id (`provider:uid`).
///
/// The id arrives from the internet and becomes an identity: one id is one
/// user, compared as exact bytes everywhere (``ExactKey``). It is kept as the
/// provider sent it, without Unicode normalization: two ids that differ only
/// in composition (`é` as U+00E9 or as `e` + U+0301) are two users, as they
/// are to the provider. What is refused is what cannot be shown or stored
/// without ambiguity: an empty id, one over ``maximumBytes`` bytes of UTF-8,
/// control characters (C0, DEL, C1), the invisible bidirectional formatting
/// characters that make one id display as another (Unicode UAX #9: U+061C,
/// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), and the invisible word
/// joiners that have no place inside an id (U+200B ZERO WIDTH SPACE, U+2060
/// WORD JOINER, U+FEFF ZERO WIDTH NO-BREAK SPACE). The joiners U+200C and
/// U+200D stay: scripts such as Persian and emoji sequences need them.
public enum ProviderUserID {
    /// The longest accepted id, in UTF-8 bytes.
    public static let maximumBytes = 128

    /// Why `uid` is refused, as a phrase for the error message, or nil when it is usable.
    public static func problem(with uid: String) -> String? {
        if uid.isEmpty { return "is empty" }
        if uid.utf8.count > maximumBytes { return "is longer than \(maximumBytes) bytes" }
        for scalar in uid.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { return "has control characters" }
            if isBidiControl(scalar.value) { return "has bidirectional formatting characters" }
            if scalar.value == 0x200B || scalar.value == 0x2060 || scalar.value == 0xFEFF { return "has invisible characters" }
        }
        return nil
    }

    /// Throws ``BrokerError/upstreamError(step:reason:)`` naming the problem when `uid` is not usable; the id itself is not repeated.
    static func check(_ uid: String, step: String) throws(BrokerError) {
        if let problem = problem(with: uid) {
            throw .upstreamError(step: step, reason: "the user id \(problem)")
        }
    }

    /// Whether `value` is one of the explicit bidirectional formatting characters.
    private static func isBidiControl(_ value: UInt32) -> Bool {
        value == 0x061C || value == 0x200E || value == 0x200F || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
    }
}
