import BrokerCore
import BrokerCrypto
import Foundation

/// Keys, keyrings, record surgery and data-directory scans for the encryption tests.
public enum EncryptedRecordFixtures {
    /// A fresh random 32-byte key in base64, as `openssl rand -base64 32` prints it.
    public static func keyText() -> String {
        Base64.encode(SecureRandom.bytes(32))
    }

    /// A codec for the keyring `value` (the syntax of `BROKER_ENCRYPTION_KEY`).
    public static func codec(_ value: String) throws -> EncryptedAccountCodec {
        EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(value))
    }

    /// The record in `bytes` as a JSON object.
    public static func json(_ bytes: [UInt8]) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw StoreTestError("not a JSON object")
        }
        return object
    }

    /// `bytes` re-serialized after `change` edited the JSON object.
    public static func edit(_ bytes: [UInt8], _ change: (inout [String: Any]) throws -> Void) throws -> [UInt8] {
        var object = try json(bytes)
        try change(&object)
        return [UInt8](try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    /// The envelope of `field` in `record`.
    public static func envelope(_ record: [String: Any], _ field: String) throws -> [String: String] {
        guard let envelope = record[field] as? [String: String] else { throw StoreTestError("\(field) is not an envelope") }
        return envelope
    }

    /// `bytes` with bit 0 of byte `index` of the decoded `part` ("ct" or "nonce") of `field` flipped.
    public static func flip(_ bytes: [UInt8], field: String, part: String, at index: (Int) -> Int) throws -> [UInt8] {
        try edit(bytes) { record in
            var envelope = try envelope(record, field)
            guard var raw = Base64URL.decode(envelope[part] ?? "") else { throw StoreTestError("\(part) is not base64url") }
            raw[index(raw.count)] ^= 0x01
            envelope[part] = Base64URL.encode(raw)
            record[field] = envelope
        }
    }

    /// The key id of every sealed field in `bytes`, sorted by field name.
    public static func kids(_ bytes: [UInt8]) throws -> [String] {
        let record = try json(bytes)
        return ["access_token", "refresh_token", "token_secret"].compactMap { (record[$0] as? [String: String])?["kid"] }
    }

    /// Every regular file under `directory`, recursively, with the needles of `needles` each one contains.
    public static func scan(_ directory: String, for needles: [String]) throws -> [String: [String]] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { throw StoreTestError("cannot walk \(directory)") }
        var found: [String: [String]] = [:]
        for case let relative as String in walker {
            let path = directory + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let text = String(decoding: FileProbe.bytes(path) ?? [], as: UTF8.self)
            found[relative] = needles.filter { text.contains($0) }
        }
        return found
    }
}
