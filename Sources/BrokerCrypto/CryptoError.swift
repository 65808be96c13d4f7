/// An error raised by a cryptographic operation that received input it cannot accept.
public enum CryptoError: Error, Sendable, Equatable {
    /// The authentication tag did not match: the ciphertext, the tag or the associated data was altered, or the key or nonce is wrong.
    case authenticationFailed
    /// The key does not have the length the algorithm requires (32 bytes for ChaCha20-Poly1305).
    case invalidKeyLength
    /// The nonce does not have the length the algorithm requires (12 bytes for ChaCha20-Poly1305).
    case invalidNonceLength
}
