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
    /// `end_user_id`, `end_user_email`, `end_user_name`: plaintext (not secrets); absent in records of earlier versions.
    package var endUserID: String? = nil
    package var endUserEmail: String? = nil
    package var endUserName: String? = nil
    /// `tags`, an object of strings; absent when none and in records of earlier versions.
    package var tags: [String: String]? = nil
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
        case endUserID = "end_user_id"
        case endUserEmail = "end_user_email"
        case endUserName = "end_user_name"
        case tags
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }
}
