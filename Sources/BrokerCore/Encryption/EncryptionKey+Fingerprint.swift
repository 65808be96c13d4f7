import BrokerCrypto

extension EncryptionKey {
    /// A value that identifies this key without revealing it: HMAC-SHA-256 under the key of a fixed label, in hex.
    ///
    /// Replicas sharing a store compare fingerprints to learn whether they
    /// seal with the same key. Only the holder of the key can compute it, and
    /// the key cannot be recovered from it; the label differs from the one
    /// behind ``derivedID(for:)``, so a fingerprint and an id never coincide.
    public var fingerprint: String {
        Hex.encode(HMAC.sha256(key: bytes, message: Array("token-broker key fingerprint".utf8)))
    }
}
