#if FUZZING
@testable import BrokerCore

/// One fuzz input run through the decoder it names, with that decoder's invariants checked.
///
/// Every decoder must return a value or its documented error for any bytes, in
/// bounded time and memory (AddressSanitizer watches the memory). Beyond that:
/// a decoded record re-encodes to a fixed point, printing a decoded value never
/// depends on its secrets, and no error message repeats a secret it was given.
struct DecoderFuzzCase {
    /// The input, split.
    let input: DecoderInput

    /// Wraps a split input.
    init(_ input: DecoderInput) {
        self.input = input
    }

    /// Runs the decoder the input names; stops the process on a broken invariant.
    func check() {
        switch input.kind {
        case .providersFile: checkProvidersFile()
        case .plainAccount: checkAccount(codec: PlainJSONAccountCodec())
        case .encryptedAccount: checkEncryptedAccount()
        case .pendingFlow: checkPendingFlow()
        case .oauth2Response: checkOAuth2Response()
        case .oauth1Response: checkOAuth1Response()
        case .tmdbResponse: checkTMDBResponse()
        case .resp: checkRESP()
        case .keyring: checkKeyring()
        }
    }

    /// The payload as text, for checks on what an error may repeat.
    var payloadText: String { String(decoding: input.payload, as: UTF8.self) }

    /// Requires that `text` holds none of `secrets`, unless the payload itself spelled it out
    /// (an error may name a value the file gave, never one it only referred to).
    func requireNoSecret(_ text: String, among secrets: [String], _ what: String) {
        for secret in secrets where text.contains(secret) && !payloadText.contains(secret) {
            fatalError("fuzz invariant broken: \(what) repeats a secret")
        }
    }
}
#endif
