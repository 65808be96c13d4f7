/// The on-disk shape of a pending flow, version 1.
struct PendingFlowJSON: Codable, Equatable {
    /// The record format; 1 for this layout.
    var version: Int
    /// The flow key.
    var state: String
    /// The provider key.
    var provider: String
    /// What binds the flow to one browser or caller.
    var binding: String
    /// `code_verifier` (PKCE), plaintext.
    var codeVerifier: String?
    /// `request_token`.
    var requestToken: String?
    /// `request_token_secret`, plaintext.
    var requestTokenSecret: String?
    /// `return_to`.
    var returnTo: String?
    /// `created_at`, RFC 3339.
    var createdAt: String
    /// `expires_at`, RFC 3339.
    var expiresAt: String

    /// The snake_case field names on disk.
    enum CodingKeys: String, CodingKey {
        case version, state, provider, binding
        case codeVerifier = "code_verifier"
        case requestToken = "request_token"
        case requestTokenSecret = "request_token_secret"
        case returnTo = "return_to"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }
}
