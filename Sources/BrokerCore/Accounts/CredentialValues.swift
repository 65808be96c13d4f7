import Foundation

/// The entered credential of an `api_key`, `basic` or `bearer` account: field name → value, each a ``Secret``.
///
/// At rest it is the account's `access_token` member: the compact JSON object of the fields, keys sorted, sealed
/// like any token (``EncryptedAccountCodec``), so records keep their format and every back end stores it unchanged.
/// The account's `token_type` names the kind. Printing it shows no value.
public struct CredentialValues: Sendable, Equatable, CustomStringConvertible {
    /// The fields, sorted by name.
    public let fields: [(name: String, value: Secret)]

    /// The values of `pairs`, sorted by name.
    public init(_ pairs: [(String, Secret)]) {
        fields = pairs.sorted { $0.0 < $1.0 }.map { (name: $0.0, value: $0.1) }
    }

    /// The value of field `name`.
    public subscript(name: String) -> String? {
        fields.first { $0.name == name }?.value.value
    }

    /// The stored text: `{"name":"value",…}`, compact, keys sorted.
    public var stored: Secret {
        var object: [String: String] = [:]
        for field in fields { object[field.name] = field.value.value }
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Secret(String(decoding: data, as: UTF8.self))
    }

    /// The values an account stores in `access_token`, or nil when the text is not a JSON object of strings.
    public init?(stored text: Secret) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.value.utf8))) as? [String: Any] else { return nil }
        var pairs: [(String, Secret)] = []
        for (name, value) in object {
            guard let string = value as? String else { return nil }
            pairs.append((name, Secret(string)))
        }
        self.init(pairs)
    }

    /// Whether `text` may be stored credentials, by its first byte after JSON white space (RFC 8259 §2): only an
    /// object may. Cheaper than ``init(stored:)``, for the read path to pass over tokens at once.
    public static func mayBeStored(_ text: Secret) -> Bool {
        for byte in text.value.utf8 {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "{"): return true
            default: return false
            }
        }
        return false
    }

    /// Every value, for the proxy to look for in a provider's answer.
    public var secretValues: [String] { fields.map(\.value.value) }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.fields.map(\.name) == rhs.fields.map(\.name) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }

    public var description: String { "CredentialValues(\(fields.map(\.name).joined(separator: ", ")))" }
}
