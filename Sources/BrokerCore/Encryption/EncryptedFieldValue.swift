/// A secret field as found in a record file: a plaintext string (records of earlier versions) or a sealed envelope.
enum EncryptedFieldValue: Codable, Equatable, Sendable {
    /// The secret in plaintext, as ``PlainJSONAccountCodec`` writes it.
    case plaintext(String)
    /// The secret sealed with a key of the keyring.
    case sealed(EncryptedField)

    /// A JSON string is plaintext; anything else must be an envelope.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .plaintext(text)
        } else {
            self = .sealed(try container.decode(EncryptedField.self))
        }
    }

    /// Writes the string or the envelope.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .plaintext(let text): try container.encode(text)
        case .sealed(let field): try container.encode(field)
        }
    }
}
