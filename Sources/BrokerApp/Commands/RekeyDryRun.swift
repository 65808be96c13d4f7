import BrokerCore
import BrokerCrypto
import BrokerFileStore

/// `token-broker rekey --dry-run`: which stored accounts `rekey` would re-seal with the current key, and
/// whether it could, found without changing anything.
///
/// Nothing is written: the data directory is not created, no key is generated, no lock is
/// taken, so it may run beside a broker serving the same directory. Every record is read and
/// opened, so a record `rekey` would stop at (a key missing from `BROKER_ENCRYPTION_KEY`, a
/// damaged file) fails the dry run the same way, naming the file.
public struct RekeyDryRun: Sendable {
    /// The data directory looked at.
    public let dataDirectory: String
    /// The current key's id, or nil when no key exists yet and `rekey` would generate one into the data directory.
    public let keyID: String?
    /// The records `rekey` would rewrite, sorted by file name.
    public let candidates: [RekeyCandidate]
    /// How many records exist.
    public let total: Int
    /// The store looked at when it is not the data directory (PostgreSQL's hosts and database), nil for files.
    public var store: String? = nil
    /// The other records holding sealed secrets (PostgreSQL: pending flows, app tokens, client registrations): per
    /// kind, how many `rekey` would re-seal and how many exist.
    public var otherRecords: [(kind: String, candidates: Int, total: Int)] = []

    /// Looks at `configuration`'s data directory with its keys; throws ``ConfigurationError`` for a bad
    /// `BROKER_ENCRYPTION_KEY`, or the store's error for a record `rekey` could not rewrite.
    public static func plan(configuration c: BrokerConfiguration) throws -> RekeyDryRun {
        let keyring: EncryptionKeyring?
        do {
            keyring = try c.encryptionKeyring ?? EncryptionKeyring.loadExisting(environmentValue: nil, dataDirectory: c.dataDirectory)
            // Sealed accounts and no key: rekey would refuse (it never generates a key over them), and so does its plan.
            if keyring == nil, try EncryptionKeyring.holdsSealedAccounts(c.dataDirectory) {
                throw EncryptionKeyring.missingKey(dataDirectory: c.dataDirectory)
            }
        } catch let error as EncryptionKeyError {
            throw ConfigurationError(variable: EncryptionKeyring.environmentVariable, message: error.problem)
        }
        // Without any key, rekey would generate one; a key made up here and forgotten reads plaintext
        // records as that one would, and fails on sealed ones as that one would.
        let codec = try EncryptedAccountCodec(keyring: keyring ?? EncryptionKeyring.parse(Base64.encode(SecureRandom.bytes(32))))
        let (candidates, total) = try StorageBackendFactory.rekeyPlan(directory: c.dataDirectory, codec: codec)
        return RekeyDryRun(dataDirectory: c.dataDirectory, keyID: keyring?.current.id, candidates: candidates, total: total)
    }

    /// The report for people: one summary line, a line per other kind of record, then one line per account to re-seal.
    public var report: String {
        let newKey =
            store == nil
            ? "a new key, generated into \(dataDirectory)/\(EncryptionKeyring.keyFileName)"
            : "a new key, generated into the table broker_settings"
        let key = keyID.map { "key \"\($0)\"" } ?? newKey
        let others = otherRecords.map { "  \($0.kind): \($0.candidates) of \($0.total) would be re-sealed" }
        let place = store ?? dataDirectory
        guard total > 0 || otherRecords.contains(where: { $0.total > 0 }) else {
            return "rekey --dry-run: no account is stored under \(place); nothing to re-seal. Nothing was changed."
        }
        guard !candidates.isEmpty || otherRecords.contains(where: { $0.candidates > 0 }) else {
            return (["rekey --dry-run: all \(total) accounts are sealed with \(key); nothing to re-seal. Nothing was changed."] + others)
                .joined(separator: "\n")
        }
        var lines = ["rekey --dry-run: \(candidates.count) of \(total) accounts would be re-sealed with \(key). Nothing was changed."]
        lines += others
        let width = candidates.map(\.accountID.count).max() ?? 0
        for candidate in candidates {
            let now =
                candidate.sealedWith.isEmpty
                ? "plaintext"
                : "sealed with key " + candidate.sealedWith.map { "\"\($0)\"" }.joined(separator: ", ")
            lines.append(
                "  " + candidate.accountID.padding(toLength: width, withPad: " ", startingAt: 0)
                    + "  " + now + "  " + candidate.fileName)
        }
        return lines.joined(separator: "\n")
    }
}
