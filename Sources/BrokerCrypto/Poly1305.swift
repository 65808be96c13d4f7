/// The Poly1305 one-time authenticator of RFC 8439 §2.5: a 32-byte key gives a 16-byte tag.
///
/// A key must authenticate one message only; ``ChaCha20Poly1305`` derives a fresh one per nonce.
public enum Poly1305 {
    /// The one-time key length in bytes.
    public static let keyByteCount = 32
    /// The tag length in bytes.
    public static let tagByteCount = 16

    /// Returns the 16-byte tag of `message` under the one-time `key` (which must be 32 bytes).
    public static func authenticate(key: [UInt8], message: [UInt8]) -> [UInt8] {
        precondition(key.count == keyByteCount, "Poly1305: key must be 32 bytes")
        var accumulator = Poly1305Accumulator(key: key)
        message.withUnsafeBytes { accumulator.absorb($0, trailing: .messageEnd) }
        return accumulator.finalize()
    }
}
