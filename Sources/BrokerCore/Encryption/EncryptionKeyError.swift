/// Why an encryption key setting was refused; messages name the setting and the entry, never key material.
public struct EncryptionKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The setting at fault: `BROKER_ENCRYPTION_KEY` or the path of the generated key file.
    public let source: String
    /// The 1-based position of the faulty entry in a comma-separated list, or nil for the value as a whole.
    public let entry: Int?
    /// What is wrong, as a sentence fragment without any key text.
    public let problem: String

    /// Creates the error.
    public init(source: String, entry: Int?, problem: String) {
        self.source = source
        self.entry = entry
        self.problem = problem
    }

    /// For example `BROKER_ENCRYPTION_KEY entry 2: the key is 31 bytes, it must be 32 …`.
    public var description: String {
        (entry.map { "\(source) entry \($0)" } ?? source) + ": " + problem
    }

    /// The hint appended to key-format problems.
    package static let hint = "give 32 random bytes in base64, e.g. from `openssl rand -base64 32`, optionally as id:BASE64"
}
