import BrokerCrypto

/// Whether a starting replica may join the others on one store: the pure decision, no I/O.
///
/// The store keeps one record of fingerprints (a Redis hash): `key:<id>` for
/// every key a replica sealed records with (its current key), and `secret`
/// for the cookie secret. A replica agrees when
/// - every key it holds whose id is recorded has the recorded fingerprint (same id, same key);
/// - it holds every recorded key, so it can open every record the others wrote;
/// - its secret has the recorded fingerprint, so its cookies verify everywhere.
///
/// An agreeing replica records what is missing (its current key, the secret
/// on an empty store). Its older keys are not recorded: a key is listed only
/// once something may have been sealed with it, so a replica that was never
/// given an older key is not refused for it. The check and the recording run
/// as one transaction, so of two replicas starting at once on an empty store
/// one records first and the other is measured against it.
public enum ReplicaAgreement {
    /// The hash field of key `id`.
    public static func keyField(_ id: String) -> String { "key:" + id }
    /// The hash field of the cookie secret.
    public static let secretField = "secret"

    /// The outcome of the check.
    public enum Verdict: Sendable, Equatable {
        /// The replica agrees; these fields (possibly none) are to be recorded.
        case agree(record: [String: String])
        /// A key with this id is recorded with another fingerprint: same id, different key.
        case keyDiffers(id: String)
        /// None of the replica's keys is recorded, and these are: it opens nothing the others stored.
        case noKeyInCommon(recorded: [String])
        /// These recorded keys are missing from the replica: records sealed with them would not open.
        case keysMissing([String])
        /// The recorded secret has another fingerprint.
        case secretDiffers
    }

    /// The verdict on `mine` against the recorded `fields` (field name → fingerprint).
    ///
    /// Fields that are neither `secret` nor `key:<id>` are ignored, so a later
    /// version may add its own. Problems are reported keys first, in a fixed order.
    public static func verdict(recorded fields: [String: String], mine: ReplicaFingerprints) -> Verdict {
        var recordedKeys: [String: String] = [:]
        for (field, value) in fields where field.hasPrefix("key:") {
            recordedKeys[String(field.dropFirst(4))] = value
        }
        for key in mine.keys {
            if let recorded = recordedKeys[key.id], !ConstantTime.equals(recorded, key.fingerprint) {
                return .keyDiffers(id: key.id)
            }
        }
        let myIDs = Set(mine.keys.map(\.id))
        let missing = recordedKeys.keys.filter { !myIDs.contains($0) }.sorted()
        if !recordedKeys.isEmpty, missing.count == recordedKeys.count {
            return .noKeyInCommon(recorded: missing)
        }
        if !missing.isEmpty { return .keysMissing(missing) }
        if let recorded = fields[secretField], !ConstantTime.equals(recorded, mine.secret) {
            return .secretDiffers
        }
        var record: [String: String] = [:]
        if recordedKeys[mine.current.id] == nil { record[keyField(mine.current.id)] = mine.current.fingerprint }
        if fields[secretField] == nil { record[secretField] = mine.secret }
        return .agree(record: record)
    }
}
