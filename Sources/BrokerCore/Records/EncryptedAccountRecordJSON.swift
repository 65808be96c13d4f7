/// The on-disk shape of an account record written by ``EncryptedAccountCodec``: version 1 with sealed secrets.
///
/// Every field keeps its name and readable value from ``AccountRecordJSON``;
/// only `access_token`, `refresh_token` and `token_secret` hold an envelope
/// instead of a string, and `"encryption": "chacha20-poly1305"` marks the record.
/// A record without the marker is a plaintext record of an earlier version.
struct EncryptedAccountRecordJSON: Codable, Equatable {
    /// The record format; 1, the same as plaintext records.
    var version: Int
    /// `chacha20-poly1305` when the secrets are sealed; absent in plaintext records.
    var encryption: String?
    /// `provider:uid`, checked against the two fields when present.
    var id: String?
    /// The provider key.
    var provider: String
    /// The user's id at the provider.
    var uid: String
    /// `access_token`, sealed.
    var accessToken: EncryptedFieldValue
    /// `token_type`.
    var tokenType: String?
    /// The granted scope.
    var scope: String?
    /// `refresh_token`, sealed.
    var refreshToken: EncryptedFieldValue?
    /// `token_secret` (OAuth 1.0a), sealed.
    var tokenSecret: EncryptedFieldValue?
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

    /// The snake_case field names on disk: ``AccountRecordJSON``'s and `encryption`.
    enum CodingKeys: String, CodingKey, CaseIterable {
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
    }

    /// The secret fields present, by their on-disk name.
    var secrets: [(name: String, value: EncryptedFieldValue)] {
        [(CodingKeys.accessToken, accessToken), (.refreshToken, refreshToken), (.tokenSecret, tokenSecret)]
            .compactMap { key, value in value.map { (key.stringValue, $0) } }
    }

    /// A record from its fields, as ``AccountRecordScanner`` found them.
    init(version: Int, encryption: String?, id: String?, provider: String, uid: String, accessToken: EncryptedFieldValue,
         tokenType: String?, scope: String?, refreshToken: EncryptedFieldValue?, tokenSecret: EncryptedFieldValue?,
         screenName: String?, expiresAt: String?, createdAt: String, updatedAt: String, refreshedAt: String?, status: String) {
        self.version = version
        self.encryption = encryption
        self.id = id
        self.provider = provider
        self.uid = uid
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.scope = scope
        self.refreshToken = refreshToken
        self.tokenSecret = tokenSecret
        self.screenName = screenName
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.refreshedAt = refreshedAt
        self.status = status
    }

    /// `plain` with each secret replaced by `seal(secret, field name)`.
    init(_ plain: AccountRecordJSON, encryption: String, seal: (String, String) -> EncryptedFieldValue) {
        version = plain.version
        self.encryption = encryption
        id = plain.id
        provider = plain.provider
        uid = plain.uid
        accessToken = seal(plain.accessToken, CodingKeys.accessToken.stringValue)
        tokenType = plain.tokenType
        scope = plain.scope
        refreshToken = plain.refreshToken.map { seal($0, CodingKeys.refreshToken.stringValue) }
        tokenSecret = plain.tokenSecret.map { seal($0, CodingKeys.tokenSecret.stringValue) }
        screenName = plain.screenName
        expiresAt = plain.expiresAt
        createdAt = plain.createdAt
        updatedAt = plain.updatedAt
        refreshedAt = plain.refreshedAt
        status = plain.status
    }

    /// The record as ``AccountRecordJSON`` reads it when every secret is plaintext (which ignores `encryption`); else nil.
    var plaintextRecord: AccountRecordJSON? {
        func text(_ value: EncryptedFieldValue?) -> String?? {
            switch value {
            case .none: .some(nil)
            case .plaintext(let text)?: .some(text)
            case .sealed?: .none
            }
        }
        guard case .plaintext(let accessText) = accessToken, let refreshText = text(refreshToken),
              let secretText = text(tokenSecret) else { return nil }
        return AccountRecordJSON(
            version: version, id: id, provider: provider, uid: uid, accessToken: accessText, tokenType: tokenType,
            scope: scope, refreshToken: refreshText, tokenSecret: secretText, screenName: screenName, expiresAt: expiresAt,
            createdAt: createdAt, updatedAt: updatedAt, refreshedAt: refreshedAt, status: status)
    }

    /// The plaintext record, each secret replaced by `open(value, field name)`.
    func plain(open: (EncryptedFieldValue, String) throws(StoreError) -> String) throws(StoreError) -> AccountRecordJSON {
        AccountRecordJSON(
            version: version,
            id: id,
            provider: provider,
            uid: uid,
            accessToken: try open(accessToken, CodingKeys.accessToken.stringValue),
            tokenType: tokenType,
            scope: scope,
            refreshToken: try refreshToken.map { value throws(StoreError) in try open(value, CodingKeys.refreshToken.stringValue) },
            tokenSecret: try tokenSecret.map { value throws(StoreError) in try open(value, CodingKeys.tokenSecret.stringValue) },
            screenName: screenName,
            expiresAt: expiresAt,
            createdAt: createdAt,
            updatedAt: updatedAt,
            refreshedAt: refreshedAt,
            status: status
        )
    }
}
