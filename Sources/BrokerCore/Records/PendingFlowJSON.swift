/// The on-disk shape of a pending flow, version 1.
package struct PendingFlowJSON: Codable, Equatable {
    /// The record format; 1 for this layout.
    package var version: Int
    /// The flow key.
    package var state: String
    /// The provider key.
    package var provider: String
    /// What binds the flow to one browser or caller.
    package var binding: String
    /// `code_verifier` (PKCE), plaintext.
    package var codeVerifier: String?
    /// `request_token`.
    package var requestToken: String?
    /// `request_token_secret`, plaintext.
    package var requestTokenSecret: String?
    /// `return_to`.
    package var returnTo: String?
    /// `nonce` (OpenID Connect), plaintext or sealed; absent in records of earlier versions and in other flows.
    package var nonce: String? = nil
    /// `created_at`, RFC 3339.
    package var createdAt: String
    /// `expires_at`, RFC 3339.
    package var expiresAt: String

    /// The snake_case field names on disk.
    enum CodingKeys: String, CodingKey {
        case version, state, provider, binding
        case codeVerifier = "code_verifier"
        case requestToken = "request_token"
        case requestTokenSecret = "request_token_secret"
        case returnTo = "return_to"
        case nonce
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }
}
