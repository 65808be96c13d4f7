import BrokerCore
import BrokerCrypto

/// What one replica shows the others about its encryption keys and cookie secret: ids and fingerprints, never the values.
///
/// A key's fingerprint is ``EncryptionKey/fingerprint`` (a MAC under the key);
/// the secret's is HMAC-SHA-256 under the secret of a fixed label. Only a
/// holder of the same key or secret computes the same value, and neither can be
/// recovered from it (both are high-entropy: 32 random bytes, or a secret of
/// 32 characters or more).
public struct ReplicaFingerprints: Sendable, Equatable {
    /// One key as the others see it.
    public struct Key: Sendable, Equatable {
        /// The key id records sealed with it carry.
        public var id: String
        /// The key's fingerprint, in hex.
        public var fingerprint: String

        /// Creates a key entry.
        public init(id: String, fingerprint: String) {
            self.id = id
            self.fingerprint = fingerprint
        }
    }

    /// The keys, the current one (which seals new records) first.
    public var keys: [Key]
    /// The cookie secret's fingerprint, in hex.
    public var secret: String

    /// Creates fingerprints from their parts; `keys` must not be empty.
    public init(keys: [Key], secret: String) {
        precondition(!keys.isEmpty, "ReplicaFingerprints: at least one key")
        self.keys = keys
        self.secret = secret
    }

    /// The fingerprints of `keyring` and of `cookieSecret`.
    public init(keyring: EncryptionKeyring, cookieSecret: [UInt8]) {
        self.init(
            keys: keyring.keys.map { Key(id: $0.id, fingerprint: $0.fingerprint) },
            secret: Self.secretFingerprint(cookieSecret))
    }

    /// The key new records are sealed with.
    public var current: Key { keys[0] }

    /// HMAC-SHA-256 under `secret` of a fixed label, in hex.
    public static func secretFingerprint(_ secret: [UInt8]) -> String {
        Hex.encode(HMAC.sha256(key: secret, message: Array("token-broker cookie secret fingerprint".utf8)))
    }
}
