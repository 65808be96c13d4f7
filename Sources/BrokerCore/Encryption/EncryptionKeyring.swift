/// The keys account secrets are sealed and opened with: the first (current) seals, every one opens.
///
/// Built from `BROKER_ENCRYPTION_KEY` (see ``parse(_:source:)``) or from the
/// key file generated in the data directory (see
/// ``loadOrGenerate(environmentValue:dataDirectory:randomBytes:)``). Listing an
/// older key after the current one keeps records sealed with it readable until
/// their next write, or until `rekey` rewrites them with the current key.
public struct EncryptionKeyring: Sendable, CustomStringConvertible {
    /// The environment variable holding the keys.
    public static let environmentVariable = "BROKER_ENCRYPTION_KEY"

    /// Every key, the current one first; ids are unique.
    public let keys: [EncryptionKey]
    /// Where the keys came from (`BROKER_ENCRYPTION_KEY` or the key file's path), for error messages.
    public let source: String

    /// Builds a keyring from checked keys: at least one, ids unique.
    init(keys: [EncryptionKey], source: String) {
        precondition(!keys.isEmpty, "EncryptionKeyring: at least one key")
        self.keys = keys
        self.source = source
    }

    /// The key new writes are sealed with.
    public var current: EncryptionKey { keys[0] }

    /// The ids of every key, the current one first.
    public var ids: [String] { keys.map(\.id) }

    /// The key with `id`, or nil when this keyring does not hold it.
    public func key(id: String) -> EncryptionKey? {
        keys.first { $0.id == id }
    }

    /// The source and the key ids, never key bytes.
    public var description: String {
        "EncryptionKeyring(source: \(source), current: \(current.id), keys: [\(ids.joined(separator: ", "))])"
    }
}
