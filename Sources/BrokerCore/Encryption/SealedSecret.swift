import BrokerCrypto

/// One secret field of a sealed record, checked for shape when the record is read and decrypted only when it is used.
package struct SealedSecret: Sendable {
    /// The key the envelope's `kid` names.
    package let key: EncryptionKey
    /// The 12-byte nonce, then the ciphertext, then the 16-byte tag: one buffer, since a store holds one per secret
    /// of every account still sealed (a million accounts after start-up).
    private let envelope: [UInt8]

    /// The 12-byte nonce.
    var nonce: [UInt8] { Array(envelope[..<ChaCha20Poly1305.nonceByteCount]) }
    /// The ciphertext followed by the 16-byte tag.
    var sealed: [UInt8] { Array(envelope[ChaCha20Poly1305.nonceByteCount...]) }

    /// Keeps `nonce` and `sealed` (the ciphertext and its tag) for `key`; the caller has checked their lengths.
    init(key: EncryptionKey, nonce: [UInt8], sealed: [UInt8]) {
        precondition(nonce.count == ChaCha20Poly1305.nonceByteCount && sealed.count >= ChaCha20Poly1305.tagByteCount)
        self.key = key
        var envelope: [UInt8] = []
        envelope.reserveCapacity(nonce.count + sealed.count)
        envelope += nonce
        envelope += sealed
        self.envelope = envelope
    }

    /// Keeps `envelope` (the 12-byte nonce, then the ciphertext and its tag, decoded in one piece) for `key`; the
    /// caller has checked its length.
    init(key: EncryptionKey, envelope: [UInt8]) {
        precondition(envelope.count >= ChaCha20Poly1305.nonceByteCount + ChaCha20Poly1305.tagByteCount)
        self.key = key
        self.envelope = envelope
    }

    /// The plaintext, or ``StoreError/corrupt(path:reason:)`` naming `path` (built only then) and `field` when the envelope does not open.
    ///
    /// RFC 8439 §2.8: the tag covers the ciphertext and the associated data
    /// `tb1|<account id>|<field>`, so a wrong key, a flipped bit or an envelope
    /// moved from another record or field all fail here, and nothing unverified
    /// is returned.
    ///
    /// `keyBytes`, when given, are this key's bytes in a buffer of the caller's
    /// own: threads opening in parallel then do not all count references on the
    /// one shared buffer.
    func open(accountID: String, field: String, path: @autoclosure () -> String, keyBytes: [UInt8]? = nil) throws(StoreError) -> String {
        let nonceEnd = ChaCha20Poly1305.nonceByteCount
        let tagStart = envelope.count - ChaCha20Poly1305.tagByteCount
        let plaintext: [UInt8]
        do {
            plaintext = try ChaCha20Poly1305.open(
                key: keyBytes ?? key.bytes, nonce: Array(envelope[..<nonceEnd]),
                ciphertext: Array(envelope[nonceEnd..<tagStart]), tag: Array(envelope[tagStart...]),
                aad: EncryptedAccountCodec.associatedData(accountID: accountID, field: field))
        } catch {
            throw .corrupt(path: path(), reason: "cannot decrypt \(field) with key \"\(key.id)\": wrong key or tampered data")
        }
        guard let text = plaintext.withUnsafeBufferPointer({ String(validUTF8: $0) }) else {
            throw .corrupt(path: path(), reason: "\(field) does not decrypt to UTF-8 text")
        }
        return text
    }
}
