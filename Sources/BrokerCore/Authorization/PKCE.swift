import BrokerCrypto

/// Proof Key for Code Exchange with the S256 method (RFC 7636).
public enum PKCE {
    /// The only method the broker sends; RFC 9700 §2.1.1 forbids `plain`.
    public static let method = "S256"

    /// A fresh code verifier: 32 random bytes as 43 base64url characters.
    ///
    /// RFC 7636 §4.1: 43–128 characters from the unreserved set, with at least 256 bits of entropy recommended.
    public static func makeVerifier() -> String {
        SecureRandom.token(byteCount: 32)
    }

    /// The S256 challenge of `verifier`: base64url without padding of SHA-256 over its ASCII bytes.
    ///
    /// RFC 7636 §4.2: `code_challenge = BASE64URL-ENCODE(SHA256(ASCII(code_verifier)))`.
    public static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(Array(verifier.utf8)))
    }
}
