import BrokerCore
import Foundation

/// An API key and the name logs and the audit trail know it by; the key itself never prints.
public struct NamedAPIKey: Sendable, Equatable {
    /// The name `BROKER_API_KEY` goes by.
    public static let defaultName = "default"
    /// The fewest bytes a key in `BROKER_API_KEYS` may have.
    public static let minimumKeyBytes = 32

    /// `[a-z0-9_.-]{1,64}`, unique among the keys.
    public let name: String
    /// The bytes a caller sends after `Bearer `.
    public let key: Secret
    /// What the key may do (`BROKER_API_KEY_SCOPES`); every scope unless scoped.
    public var grant: KeyGrant = .all

    /// Pairs a name with a key (not validated: ``parseList(_:variable:)`` validates what comes from the environment).
    public init(name: String, key: Secret) {
        self.name = name
        self.key = key
    }

    /// Whether `name` is 1–64 bytes of `a-z`, `0-9`, `_`, `.` and `-`.
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2E || $0 == 0x2D }
    }

    /// Reads `name:key,name2:key2`. A problem names the entry by its position or name, never the key.
    ///
    /// An empty entry (`a:x,,b:y`, a comma at either end) is refused: it is most often a key deleted in an edit
    /// that meant to replace it. So is one key under two names: every call with it would be put down to the first.
    public static func parseList(_ text: String?, variable: String) throws(ConfigurationError) -> [NamedAPIKey] {
        guard let text else { return [] }
        var keys: [NamedAPIKey] = []
        for (index, item) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let entry = item.trimmingCharacters(in: .whitespaces)
            guard !entry.isEmpty else {
                throw ConfigurationError(
                    variable: variable, message: "entry \(index + 1) is empty (two commas in a row, or a comma at either end)")
            }
            guard let colon = entry.firstIndex(of: ":") else {
                throw ConfigurationError(variable: variable, message: "entry \(index + 1) must be name:key")
            }
            let name = String(entry[..<colon])
            let key = String(entry[entry.index(after: colon)...])
            guard isValidName(name) else {
                throw ConfigurationError(
                    variable: variable, message: "entry \(index + 1): a key's name must be 1-64 characters of a-z, 0-9, _, . and -")
            }
            guard key.utf8.count >= minimumKeyBytes else {
                throw ConfigurationError(
                    variable: variable, message: "the key named \(name) must be at least \(minimumKeyBytes) bytes long")
            }
            guard !keys.contains(where: { $0.name == name }) else {
                throw ConfigurationError(variable: variable, message: "the name \(name) is given to more than one key")
            }
            if let twin = keys.first(where: { $0.key.value == key }) {
                throw ConfigurationError(
                    variable: variable, message: "the keys named \(twin.name) and \(name) are the same key; give each key one name")
            }
            keys.append(NamedAPIKey(name: name, key: Secret(key)))
        }
        return keys
    }
}
