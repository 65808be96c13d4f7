/// The stored shape of an account, version 1, generic over how its secrets are written.
///
/// ``PlainJSONAccountCodec`` writes `AccountRecord<String>`, every secret in
/// plaintext and no `encryption` member. ``EncryptedAccountCodec`` writes
/// `AccountRecord<EncryptedFieldValue>`: `access_token`, `refresh_token`,
/// `token_secret` and `id_token` hold envelopes and `"encryption": "chacha20-poly1305"` marks
/// the record; it reads plaintext records of earlier versions through the same
/// type. Every other member has one name and one meaning in both, so a member
/// is added here once (and to ``AccountRecordScanner``, which reads the same members).
/// Members added after the first release are optional and left out when absent, so
/// records written before them read, and re-encode, byte for byte.
/// ``EncryptedAccountCodec`` also maps a record to its checked envelopes (``SealedSecret``) with ``mapSecrets(_:)``.
struct AccountRecord<SecretField> {
    /// The members' names on disk.
    typealias CodingKeys = AccountRecordField

    /// The record format; 1 for this layout, plaintext or sealed.
    var version: Int
    /// `chacha20-poly1305` when the secrets are sealed; absent in plaintext records.
    var encryption: String?
    /// `provider:uid`, checked against the two fields when present.
    var id: String?
    /// The provider key.
    var provider: String
    /// The user's id at the provider.
    var uid: String
    /// `access_token`.
    var accessToken: SecretField
    /// `token_type`.
    var tokenType: String?
    /// The granted scope.
    var scope: String?
    /// `refresh_token`.
    var refreshToken: SecretField?
    /// `token_secret` (OAuth 1.0a).
    var tokenSecret: SecretField?
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
    /// `active`, `reauthorization_required` or `refresh_exhausted` (a value earlier versions do not know: they
    /// refuse such a record as damaged, so going back to one needs the account active or signed in again).
    var status: String
    /// `issued_at`, RFC 3339: when the current access token was issued; absent in records of earlier versions.
    var issuedAt: String? = nil
    /// `refresh_token_expires_at`, RFC 3339: when the refresh token lapses unused; absent when unknown.
    var refreshTokenExpiresAt: String? = nil
    /// `id_token` (OpenID Connect), a secret like the tokens; absent when the provider sent none.
    var idToken: SecretField? = nil
    /// `extras`: the token answer's other fields as one JSON object's text; absent when there were none.
    var extras: String? = nil
    /// `end_user_id`: the back end's user the account belongs to; absent when none was given and in earlier records.
    var endUserID: String? = nil
    /// `end_user_email`, present only with `end_user_id`.
    var endUserEmail: String? = nil
    /// `end_user_name`, present only with `end_user_id`.
    var endUserName: String? = nil
    /// `tags`: a JSON object of strings; absent when the account has none.
    var tags: [String: String]? = nil
    /// `settings`: the provider's per-account settings as a JSON object of strings; absent when none (and in earlier records).
    var settings: [String: String]? = nil
    /// `metadata`: the back end's JSON object as its text; absent when none was set (and in earlier records).
    var metadata: String? = nil

    /// The secrets present, in the order of their members: `access_token`, `refresh_token`, `token_secret`, `id_token`.
    var secrets: [(field: AccountRecordField, value: SecretField)] {
        [(AccountRecordField.accessToken, accessToken), (.refreshToken, refreshToken), (.tokenSecret, tokenSecret), (.idToken, idToken)]
            .compactMap { field, value in value.map { (field, $0) } }
    }

    /// The same record with each secret replaced by `transform(secret, its member)`, in the order of ``secrets``.
    func mapSecrets<NewSecret, Failure: Error>(
        _ transform: (SecretField, AccountRecordField) throws(Failure) -> NewSecret
    ) throws(Failure) -> AccountRecord<NewSecret> {
        AccountRecord<NewSecret>(
            version: version,
            encryption: encryption,
            id: id,
            provider: provider,
            uid: uid,
            accessToken: try transform(accessToken, .accessToken),
            tokenType: tokenType,
            scope: scope,
            refreshToken: try refreshToken.map { value throws(Failure) in try transform(value, .refreshToken) },
            tokenSecret: try tokenSecret.map { value throws(Failure) in try transform(value, .tokenSecret) },
            screenName: screenName,
            expiresAt: expiresAt,
            createdAt: createdAt,
            updatedAt: updatedAt,
            refreshedAt: refreshedAt,
            status: status,
            issuedAt: issuedAt,
            refreshTokenExpiresAt: refreshTokenExpiresAt,
            idToken: try idToken.map { value throws(Failure) in try transform(value, .idToken) },
            extras: extras,
            endUserID: endUserID,
            endUserEmail: endUserEmail,
            endUserName: endUserName,
            tags: tags,
            settings: settings,
            metadata: metadata
        )
    }
}

extension AccountRecord: Encodable where SecretField: Encodable {}
extension AccountRecord: Decodable where SecretField: Decodable {}
extension AccountRecord: Equatable where SecretField: Equatable {}

extension AccountRecord<EncryptedFieldValue> {
    /// The record with plaintext secrets when every secret is plaintext (`encryption` kept as read); else nil.
    var plaintextRecord: AccountRecord<String>? {
        try? mapSecrets { value, _ throws(SealedSecretFound) in
            guard case .plaintext(let text) = value else { throw SealedSecretFound() }
            return text
        }
    }
}

/// Stops ``AccountRecord/plaintextRecord`` at the first sealed secret.
private struct SealedSecretFound: Error {}

/// A member of an account record, by its snake_case name on disk.
enum AccountRecordField: String, CodingKey, CaseIterable {
    case version, encryption, id, provider, uid, scope, status
    case accessToken = "access_token"
    case tokenType = "token_type"
    case refreshToken = "refresh_token"
    case tokenSecret = "token_secret"
    case screenName = "screen_name"
    case expiresAt = "expires_at"
    case createdAt = "created_at"
    case updatedAt = "updated_at"
    case refreshedAt = "refreshed_at"
    case issuedAt = "issued_at"
    case refreshTokenExpiresAt = "refresh_token_expires_at"
    case idToken = "id_token"
    case extras
    case endUserID = "end_user_id"
    case endUserEmail = "end_user_email"
    case endUserName = "end_user_name"
    case tags
    case settings
    case metadata
}
