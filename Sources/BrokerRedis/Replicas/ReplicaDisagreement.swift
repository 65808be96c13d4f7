/// A replica may not join the others: its key or secret differs from theirs. Start-up stops with exit code 2.
///
/// The message names the variable to fix and the key ids involved, never a key or secret.
public struct ReplicaDisagreement: Error, Sendable, Equatable, CustomStringConvertible {
    /// The variable at fault: `BROKER_ENCRYPTION_KEY` or `BROKER_SECRET`.
    public let variable: String
    /// What differs and what to do, as a sentence that follows the variable's name.
    public let message: String

    /// Creates the error.
    public init(variable: String, message: String) {
        self.variable = variable
        self.message = message
    }

    /// The variable and the message, such as `BROKER_SECRET differs from the secret the other replicas use: …`.
    public var description: String { "\(variable) \(message)" }

    /// The variable holding the encryption keys.
    static let keyVariable = "BROKER_ENCRYPTION_KEY"
    /// The variable holding the cookie secret.
    static let secretVariable = "BROKER_SECRET"

    /// The refusal for `verdict` (nil when it agrees); `mine` names this replica's keys, `generated` says where they came from.
    init?(_ verdict: ReplicaAgreement.Verdict, mine: ReplicaFingerprints, keyOrigin: String?, secretOrigin: String?) {
        let keyNote = keyOrigin.map { " (not set here: this replica uses the key \($0))" } ?? ""
        let secretNote = secretOrigin.map { " (not set here: this replica uses the secret \($0))" } ?? ""
        switch verdict {
        case .agree:
            return nil
        case .keyDiffers(let id):
            self.init(
                variable: Self.keyVariable,
                message: """
                    differs from the key the other replicas use (key id \(id)): the same id names another key\(keyNote). \
                    Give every replica the same BROKER_ENCRYPTION_KEY.
                    """)
        case .noKeyInCommon(let recorded):
            self.init(
                variable: Self.keyVariable,
                message: """
                    differs from the key the other replicas use (key id \(recorded.joined(separator: ", ")); \
                    this replica's is \(mine.current.id))\(keyNote): it cannot open the records they stored. \
                    Give every replica the same BROKER_ENCRYPTION_KEY.
                    """)
        case .keysMissing(let ids):
            let list = ids.joined(separator: ", ")
            self.init(
                variable: Self.keyVariable,
                message: """
                    lacks key id \(list), which other replicas have sealed records with\(keyNote): list it after the \
                    current key (new,old) until `token-broker rekey` has resealed every record with the current key.
                    """)
        case .secretDiffers:
            self.init(
                variable: Self.secretVariable,
                message: """
                    differs from the secret the other replicas use\(secretNote): session cookies signed by one would not \
                    verify on another. Give every replica the same BROKER_SECRET.
                    """)
        }
    }
}
