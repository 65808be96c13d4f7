/// The AEAD_CHACHA20_POLY1305 construction of RFC 8439 §2.8: encryption with a 16-byte authentication tag.
///
/// A (key, nonce) pair must never seal two messages: a repeat reveals the XOR of the plaintexts
/// and the one-time Poly1305 key (RFC 8439 §4).
public enum ChaCha20Poly1305 {
    /// The key length in bytes.
    public static let keyByteCount = 32
    /// The nonce length in bytes.
    public static let nonceByteCount = 12
    /// The tag length in bytes.
    public static let tagByteCount = 16

    /// Encrypts `plaintext` and authenticates it together with `aad`.
    ///
    /// A key that is not 32 bytes or a nonce that is not 12 bytes is a programmer error and stops the process.
    public static func seal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8], aad: [UInt8] = []) -> (ciphertext: [UInt8], tag: [UInt8]) {
        precondition(key.count == keyByteCount, "ChaCha20Poly1305: key must be 32 bytes")
        precondition(nonce.count == nonceByteCount, "ChaCha20Poly1305: nonce must be 12 bytes")
        // RFC 8439 §2.8: the payload is encrypted from counter 1; block 0 gives the Poly1305 key.
        let ciphertext = ChaCha20.xor(key: key, nonce: nonce, counter: 1, plaintext)
        return (ciphertext, tag(key: key, nonce: nonce, ciphertext: ciphertext, aad: aad))
    }

    /// Checks the tag over `aad` and `ciphertext` and, only if it matches, returns the plaintext.
    ///
    /// The tag is compared in constant time (RFC 8439 §4). Wrong key or nonce lengths throw
    /// ``CryptoError/invalidKeyLength`` or ``CryptoError/invalidNonceLength``; any mismatch,
    /// including a tag that is not 16 bytes, throws ``CryptoError/authenticationFailed``.
    public static func open(key: [UInt8], nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8], aad: [UInt8] = []) throws(CryptoError)
        -> [UInt8]
    {
        guard key.count == keyByteCount else { throw .invalidKeyLength }
        guard nonce.count == nonceByteCount else { throw .invalidNonceLength }
        // RFC 8439 §4: tags are never truncated, so a short tag cannot match.
        guard tag.count == tagByteCount else { throw .authenticationFailed }
        let expected = self.tag(key: key, nonce: nonce, ciphertext: ciphertext, aad: aad)
        guard ConstantTime.equals(expected, tag) else { throw .authenticationFailed }
        return ChaCha20.xor(key: key, nonce: nonce, counter: 1, ciphertext)
    }

    /// RFC 8439 §2.8: Poly1305 over aad | pad16 | ciphertext | pad16 | le64(aad.count) | le64(ciphertext.count).
    private static func tag(key: [UInt8], nonce: [UInt8], ciphertext: [UInt8], aad: [UInt8]) -> [UInt8] {
        // RFC 8439 §2.6: the one-time key is the first 32 bytes of block 0.
        let oneTimeKey = Array(ChaCha20.block(key: key, counter: 0, nonce: nonce).prefix(Poly1305.keyByteCount))
        var accumulator = Poly1305Accumulator(key: oneTimeKey)
        aad.withUnsafeBytes { accumulator.absorb($0, trailing: .zeroPadded) }
        ciphertext.withUnsafeBytes { accumulator.absorb($0, trailing: .zeroPadded) }
        var lengths = [UInt8]()
        lengths.reserveCapacity(16)
        for length in [UInt64(aad.count), UInt64(ciphertext.count)] {
            for shift in stride(from: 0, to: 64, by: 8) { lengths.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
        }
        lengths.withUnsafeBytes { accumulator.absorb($0, trailing: .zeroPadded) }
        return accumulator.finalize()
    }
}
