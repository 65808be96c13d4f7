/// The on-disk shape of an account record, version 1.
struct AccountRecordJSON: Codable {
    /// The record format; 1 for this layout.
    var version: Int
    /// `provider:uid`, checked against the two fields when present.
    var id: String?
    /// The provider key.
    var provider: String
    /// The user's id at the provider.
    var uid: String
    /// `access_token`, plaintext.
    var accessToken: String
    /// `token_type`.
    var tokenType: String?
    /// The granted scope.
    var scope: String?
    /// `refresh_token`, plaintext.
    var refreshToken: String?
    /// `token_secret` (OAuth 1.0a), plaintext.
    var tokenSecret: String?
    /// `screen_name`.
    var screenName: String?
    /// `expires_at`, RFC 3339.
    var expiresAt: String?
    /// `created_at`, RFC 3339.
    var createdAt: String
    /// `updated_at`, RFC 3339.
    var updatedAt: String
    /// `refreshed_at`, RFC 3339.
    var refreshedAt: String?
    /// `active` or `reauthorization_required`.
    var status: String

    /// The snake_case field names on disk.
    enum CodingKeys: String, CodingKey {
        case version, id, provider, uid, scope, status
        case accessToken = "access_token"
        case tokenType = "token_type"
        case refreshToken = "refresh_token"
        case tokenSecret = "token_secret"
        case screenName = "screen_name"
        case expiresAt = "expires_at"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case refreshedAt = "refreshed_at"
    }
}
