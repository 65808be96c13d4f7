import Foundation

/// Stores an app token as a small JSON object, its access token sealed like account secrets.
///
/// `{"version":1,"provider","requested_scope","access_token","token_type","scope","issued_at","expires_at"}`.
/// With a `sealer` the access token is `sealed:v1:<kid>:<nonce>:<ciphertext>`,
/// ChaCha20-Poly1305 with `app:<key>` and the field name as associated data, so a
/// value moved to another key does not open. A plaintext value is read too.
public enum AppTokenCodec {
    /// The format written and read.
    static let version = 1
    /// The prefix of a sealed access token.
    static let sealedPrefix = "sealed:v1:"
    /// The largest stored value read, in bytes.
    static let maximumBytes = 32 * 1024

    /// The stored bytes of `token`.
    public static func encode(_ token: AppToken, sealer: EncryptedAccountCodec?) -> [UInt8] {
        var access = token.accessToken.value
        if let sealer {
            let sealed = sealer.seal(access, accountID: "app:" + token.key, field: "access_token")
            access = sealedPrefix + sealed.kid + ":" + sealed.nonce + ":" + sealed.ct
        }
        var object: [String: Any] = [
            "version": version, "provider": token.provider, "requested_scope": token.requestedScope, "access_token": access,
            "issued_at": RFC3339Date.formatWithMillis(token.issuedAt),
        ]
        if let type = token.tokenType { object["token_type"] = type }
        if let scope = token.scope { object["scope"] = scope }
        if let expiresAt = token.expiresAt { object["expires_at"] = RFC3339Date.formatWithMillis(expiresAt) }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return [UInt8](data)
    }

    /// The token in `bytes`, stored under `key`; ``StoreError/corrupt(path:reason:)`` naming `path` when it does not decode or open.
    public static func decode(_ bytes: [UInt8], key: String, path: String, sealer: EncryptedAccountCodec?) throws(StoreError) -> AppToken {
        func corrupt(_ reason: String) -> StoreError { .corrupt(path: path, reason: reason) }
        guard bytes.count <= maximumBytes, let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw corrupt("not an app token record")
        }
        guard ProviderValue.integer(object["version"] as Any) == version else { throw corrupt("unsupported app token record version") }
        guard let provider = object["provider"] as? String, let requested = object["requested_scope"] as? String,
            let stored = object["access_token"] as? String, let issuedText = object["issued_at"] as? String
        else { throw corrupt("an app token record lacks a field") }
        guard ExactKey.same(AppToken.key(provider: provider, scope: requested), key) else {
            throw corrupt("the app token record belongs to another key")
        }
        let issuedAt = try JSONRecord.date(issuedText, field: "issued_at", path: path)
        let expiresAt = try JSONRecord.date(object["expires_at"] as? String, field: "expires_at", path: path)
        let access: String
        if stored.hasPrefix(sealedPrefix) {
            guard let sealer else { throw corrupt("access_token is sealed but no encryption key is configured") }
            let parts = stored.dropFirst(sealedPrefix.count).split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3 else { throw corrupt("access_token has a malformed sealed value") }
            let envelope = EncryptedField(kid: String(parts[0]), nonce: String(parts[1]), ct: String(parts[2]))
            access = try sealer.open(.sealed(envelope), sealedRecord: true, accountID: "app:" + key, field: "access_token", path: path)
        } else {
            access = stored
        }
        return AppToken(
            provider: provider, requestedScope: requested, accessToken: Secret(access), tokenType: object["token_type"] as? String,
            scope: object["scope"] as? String, issuedAt: issuedAt, expiresAt: expiresAt)
    }
}
