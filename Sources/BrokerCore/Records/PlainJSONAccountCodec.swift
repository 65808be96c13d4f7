import Foundation

/// Stores an account as human-readable JSON: pretty, sorted keys, RFC 3339 UTC dates and `"version": 1`.
///
/// Secrets are written in plaintext; an encrypting codec replaces this one
/// behind ``AccountRecordCodec`` and keeps reading these files.
public struct PlainJSONAccountCodec: AccountRecordCodec {
    /// The record format this codec writes and reads.
    public static let version = 1

    /// Creates the codec.
    public init() {}

    /// The JSON document for `account`, ending in a newline.
    public func encode(_ account: Account) throws(StoreError) -> [UInt8] {
        try JSONRecord.encode(Self.record(for: account))
    }

    /// The account in `bytes`; throws ``StoreError/corrupt(path:reason:)`` when they are not a valid version 1 record.
    public func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> Account {
        if let scanned = AccountRecordScanner.scan(bytes), let record = scanned.plaintextRecord {
            return try Self.account(from: record, path: path)
        }
        return try Self.account(from: JSONRecord.decode(AccountRecord<String>.self, from: bytes, path: path), path: path)
    }

    /// The account the record for `account` decodes to, without writing or parsing JSON: JSON keeps every string as is.
    public func stored(_ account: Account, path: String) throws(StoreError) -> Account {
        try Self.account(from: Self.record(for: account), path: path)
    }

    /// The version 1 record for `account`, secrets in plaintext; ``EncryptedAccountCodec`` seals them afterwards.
    static func record(for account: Account) -> AccountRecord<String> {
        AccountRecord(
            version: Self.version,
            encryption: nil,
            id: account.id,
            provider: account.provider,
            uid: account.uid,
            accessToken: account.accessToken.value,
            tokenType: account.tokenType,
            scope: account.scope,
            refreshToken: account.refreshToken?.value,
            tokenSecret: account.tokenSecret?.value,
            screenName: account.screenName,
            expiresAt: account.expiresAt.map(RFC3339Date.format),
            createdAt: RFC3339Date.format(account.createdAt),
            updatedAt: RFC3339Date.format(account.updatedAt),
            refreshedAt: account.refreshedAt.map(RFC3339Date.format),
            status: account.status.rawValue,
            issuedAt: account.issuedAt.map(RFC3339Date.format),
            refreshTokenExpiresAt: account.refreshTokenExpiresAt.map(RFC3339Date.format),
            idToken: account.idToken?.value,
            extras: account.extras,
            endUserID: account.endUser?.id,
            endUserEmail: account.endUser?.email,
            endUserName: account.endUser?.name,
            tags: account.tags.isEmpty ? nil : account.tags,
            settings: account.settings.isEmpty ? nil : account.settings,
            metadata: account.metadata
        )
    }

    /// The account in a parsed record, after checking its version, status, dates and id.
    static func account(from record: AccountRecord<String>, path: String) throws(StoreError) -> Account {
        guard record.version == Self.version else {
            throw StoreError.corrupt(path: path, reason: "unsupported record version \(record.version)")
        }
        guard let status = AccountStatus(rawValue: record.status) else {
            throw StoreError.corrupt(path: path, reason: "unknown status \"\(record.status)\"")
        }
        let account = Account(
            provider: record.provider,
            uid: record.uid,
            accessToken: Secret(record.accessToken),
            tokenType: record.tokenType,
            scope: record.scope,
            refreshToken: record.refreshToken.map(Secret.init),
            tokenSecret: record.tokenSecret.map(Secret.init),
            screenName: record.screenName,
            expiresAt: try JSONRecord.date(record.expiresAt, field: "expires_at", path: path),
            createdAt: try JSONRecord.date(record.createdAt, field: "created_at", path: path),
            updatedAt: try JSONRecord.date(record.updatedAt, field: "updated_at", path: path),
            refreshedAt: try JSONRecord.date(record.refreshedAt, field: "refreshed_at", path: path),
            status: status,
            issuedAt: try JSONRecord.date(record.issuedAt, field: "issued_at", path: path),
            refreshTokenExpiresAt: try JSONRecord.date(record.refreshTokenExpiresAt, field: "refresh_token_expires_at", path: path),
            idToken: record.idToken.map(Secret.init),
            extras: record.extras,
            endUser: record.endUserID.map { EndUser(id: $0, email: record.endUserEmail, name: record.endUserName) },
            tags: record.tags ?? [:],
            settings: record.settings ?? [:],
            metadata: record.metadata
        )
        if let id = record.id, id != account.id {
            throw StoreError.corrupt(path: path, reason: "id \"\(id)\" does not match provider and uid (\"\(account.id)\")")
        }
        return account
    }
}
