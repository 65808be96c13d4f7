/// The scope a back end asks an app token for, normalized so that equal sets share one cached token.
///
/// RFC 6749 §3.3: `scope = scope-token *( SP scope-token )`,
/// `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`, and the order of the tokens
/// does not matter. The tokens are split on spaces, checked, deduplicated and
/// sorted by their bytes; `"b a a"` and `"a b"` are the same set.
public enum AppTokenScope {
    /// The longest scope text accepted, in bytes, as asked and as normalized.
    public static let maximumBytes = 1024
    /// The most scope tokens accepted.
    public static let maximumTokens = 64

    /// The sorted, deduplicated scope tokens of `text`; `badRequest` naming the rule it breaks.
    public static func tokens(_ text: String) throws(BrokerError) -> [String] {
        guard text.utf8.count <= maximumBytes else {
            throw .badRequest("scope is longer than \(maximumBytes) bytes")
        }
        let parts = text.utf8.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        for part in parts where !part.allSatisfy(isScopeCharacter) {
            throw .badRequest(
                "scope holds a character RFC 6749 §3.3 does not allow in a scope token (visible ASCII but \" and \\, separated by spaces)")
        }
        let unique = Set(parts.map { String(decoding: $0, as: UTF8.self) }).map(ExactKey.init).sorted()
        guard unique.count <= maximumTokens else { throw .badRequest("scope names more than \(maximumTokens) scopes") }
        return unique.map(\.string)
    }

    /// The normalized scope text of `tokens`: joined with single spaces.
    public static func text(_ tokens: [String]) -> String {
        tokens.joined(separator: " ")
    }

    /// RFC 6749 §3.3 NQCHAR: `%x21 / %x23-5B / %x5D-7E`.
    static func isScopeCharacter(_ byte: UInt8) -> Bool {
        byte == 0x21 || (0x23...0x5B).contains(byte) || (0x5D...0x7E).contains(byte)
    }
}
