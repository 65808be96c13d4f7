/// A fuzz input split into the decoder it targets, a parameter byte and the payload.
///
/// Byte 0 picks the decoder, byte 1 picks details such as the HTTP status and
/// Content-Type of a provider response or where to split a RESP stream; the
/// rest is what the decoder reads.
struct DecoderInput {
    /// The decoders under test.
    enum Kind: UInt8, CaseIterable {
        /// `ProviderRegistry.load(environment:providersFile:)`.
        case providersFile
        /// `PlainJSONAccountCodec.decode(_:path:)`.
        case plainAccount
        /// `EncryptedAccountCodec.decode(_:path:)` and `needsRekey`.
        case encryptedAccount
        /// `PendingFlowCodec.decode(_:path:)`.
        case pendingFlow
        /// `OAuth2ResponseValidator`: token grant, JSON object, revocation.
        case oauth2Response
        /// `OAuth1Client`'s form and JSON answers and error summary.
        case oauth1Response
        /// `TMDBClient.checkedObject(of:step:)`.
        case tmdbResponse
        /// `RESPParser.feed`, whole and split.
        case resp
        /// `EncryptionKeyring.parse` (`BROKER_ENCRYPTION_KEY`).
        case keyring
    }

    /// The decoder this input is for.
    let kind: Kind
    /// The detail selector.
    let parameter: UInt8
    /// The bytes the decoder reads.
    let payload: [UInt8]

    /// Splits raw fuzz bytes; short inputs get parameter 0 and an empty payload.
    init(_ bytes: [UInt8]) {
        kind = Kind(rawValue: (bytes.first ?? 0) % UInt8(Kind.allCases.count)) ?? .providersFile
        parameter = bytes.count > 1 ? bytes[1] : 0
        payload = bytes.count > 2 ? Array(bytes[2...]) : []
    }

    /// The raw input for `kind`, `parameter` and `payload` (what the seed writer stores).
    static func encode(_ kind: Kind, parameter: UInt8 = 0, _ payload: [UInt8]) -> [UInt8] {
        [kind.rawValue, parameter] + payload
    }
}
