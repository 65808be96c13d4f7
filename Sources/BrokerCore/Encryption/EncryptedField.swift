/// A secret field sealed with ChaCha20-Poly1305, as stored: `{"ct": "…", "kid": "…", "nonce": "…"}`.
///
/// `nonce` is the 12-byte nonce and `ct` the ciphertext followed by the 16-byte
/// tag, both base64url without padding; `kid` names the key that sealed it.
struct EncryptedField: Codable, Equatable, Sendable {
    /// The id of the key that sealed the field.
    var kid: String
    /// The 96-bit nonce, base64url.
    var nonce: String
    /// Ciphertext and tag, base64url.
    var ct: String
}
