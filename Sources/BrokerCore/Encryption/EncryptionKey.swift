import BrokerCrypto

/// One 256-bit ChaCha20-Poly1305 key and the id that records sealed with it carry; never prints its bytes.
public struct EncryptionKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key length in bytes (RFC 8439 §2.8: a 256-bit key).
    public static let byteCount = ChaCha20Poly1305.keyByteCount

    /// The id written next to every field sealed with this key (`kid`); not secret.
    public let id: String
    /// The key material; only the codec reads it.
    let bytes: [UInt8]

    /// Wraps `bytes` (exactly ``byteCount`` long) under `id`; the caller has checked both.
    init(id: String, bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "EncryptionKey: a key is 32 bytes")
        self.id = id
        self.bytes = bytes
    }

    /// The id given to a key listed without one: 8 hex digits of HMAC-SHA-256(key, "token-broker key id").
    ///
    /// The same key always gets the same id, so moving it from the generated key
    /// file into `BROKER_ENCRYPTION_KEY` keeps every record readable. A MAC
    /// rather than a bare hash keeps the id from being a plain digest of the key.
    static func derivedID(for bytes: [UInt8]) -> String {
        Hex.encode(Array(HMAC.sha256(key: bytes, message: Array("token-broker key id".utf8)).prefix(4)))
    }

    /// Whether `id` is usable as a key id: 1 to 64 of `A-Z a-z 0-9 . _ -`.
    static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            }
    }

    /// `EncryptionKey(<id>, <redacted>)`: the id only.
    public var description: String { "EncryptionKey(\(id), <redacted>)" }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror showing only the id, so `dump` never prints the key bytes.
    public var customMirror: Mirror { Mirror(self, children: ["id": id], displayStyle: .struct) }
}
