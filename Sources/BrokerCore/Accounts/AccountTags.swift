/// Labels a back end puts on an account: up to ten `key: value` pairs.
///
/// Keys are 1–64 bytes of `a-z`, `0-9`, `_`, `.` and `-`; values 0–256 bytes
/// of UTF-8 without control characters. Each key is held once.
public enum AccountTags {
    /// The most tags one account carries.
    public static let maximumCount = 10
    /// The longest key, in bytes.
    public static let maximumKeyLength = 64
    /// The longest value, in bytes.
    public static let maximumValueLength = 256

    /// Whether `key` is 1–64 bytes of `[a-z0-9_.-]`.
    public static func isValidKey(_ key: String) -> Bool {
        (1...maximumKeyLength).contains(key.utf8.count)
            && key.utf8.allSatisfy { byte in
                (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x5F || byte == 0x2E || byte == 0x2D
            }
    }

    /// Whether `value` is at most 256 bytes without control characters.
    public static func isValidValue(_ value: String) -> Bool {
        value.utf8.count <= maximumValueLength && !EndUser.hasControlCharacter(value)
    }

    /// The tags in `pairs` (in the order given), refused naming the field `tags` when one is bad, repeated, or there are too many.
    public static func validated(_ pairs: [(key: String, value: String)]) throws(BrokerError) -> [String: String] {
        guard pairs.count <= maximumCount else { throw .badRequest("tags holds at most \(maximumCount) pairs.") }
        var tags: [String: String] = [:]
        for (key, value) in pairs {
            guard isValidKey(key) else {
                throw .badRequest("tags: a key must be 1 to \(maximumKeyLength) bytes of a-z, 0-9, _, . and -.")
            }
            guard isValidValue(value) else {
                throw .badRequest("tags: the value of \(key) must be at most \(maximumValueLength) bytes without control characters.")
            }
            guard tags.updateValue(value, forKey: key) == nil else { throw .badRequest("tags: the key \(key) is given twice.") }
        }
        return tags
    }

    /// `key:value` split at the first colon, for the form `tag=key:value`; nil without a colon.
    public static func split(_ pair: String) -> (key: String, value: String)? {
        guard let colon = pair.firstIndex(of: ":") else { return nil }
        return (String(pair[..<colon]), String(pair[pair.index(after: colon)...]))
    }
}
