/// The secrets of an account read from a sealed record, not decrypted yet.
///
/// The rest of the record is decoded and checked when it is read (version,
/// status, dates, id, and each envelope's key id, nonce and ciphertext length),
/// so only the ChaCha20-Poly1305 opening waits until the account is first used.
/// A class, so the file store can tell whether the entry it opened is still the
/// one in its index.
final class SealedSecrets: Sendable {
    /// The sealed `access_token`.
    let accessToken: SealedSecret
    /// The sealed `refresh_token`, when the record has one.
    let refreshToken: SealedSecret?
    /// The sealed `token_secret`, when the record has one.
    let tokenSecret: SealedSecret?

    /// Keeps the sealed secrets of one record.
    init(accessToken: SealedSecret, refreshToken: SealedSecret?, tokenSecret: SealedSecret?) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.tokenSecret = tokenSecret
    }

    /// Whether any secret is sealed with the key `keyID`.
    func uses(keyID: String) -> Bool {
        accessToken.key.id == keyID || refreshToken?.key.id == keyID || tokenSecret?.key.id == keyID
    }

    /// `account` with these secrets decrypted into it; throws ``StoreError/corrupt(path:reason:)`` naming `path` and the field that fails.
    func open(into account: Account, path: @autoclosure () -> String) throws(StoreError) -> Account {
        typealias Key = EncryptedAccountRecordJSON.CodingKeys
        let id = account.id
        var account = account
        account.accessToken = Secret(try accessToken.open(accountID: id, field: Key.accessToken.stringValue, path: path()))
        account.refreshToken = try refreshToken.map { secret throws(StoreError) in
            Secret(try secret.open(accountID: id, field: Key.refreshToken.stringValue, path: path()))
        }
        account.tokenSecret = try tokenSecret.map { secret throws(StoreError) in
            Secret(try secret.open(accountID: id, field: Key.tokenSecret.stringValue, path: path()))
        }
        return account
    }
}
