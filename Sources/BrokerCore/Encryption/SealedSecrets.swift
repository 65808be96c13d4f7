/// The secrets of an account read from a sealed record, not decrypted yet.
///
/// The rest of the record is decoded and checked when it is read (version,
/// status, dates, id, and each envelope's key id, nonce and ciphertext length),
/// so only the ChaCha20-Poly1305 opening waits until the account is first used.
/// A class, so the file store can tell whether the entry it opened is still the
/// one in its index.
package final class SealedSecrets: Sendable {
    /// The sealed `access_token`.
    package let accessToken: SealedSecret
    /// The sealed `refresh_token`, when the record has one.
    package let refreshToken: SealedSecret?
    /// The sealed `token_secret`, when the record has one.
    package let tokenSecret: SealedSecret?
    /// The sealed `id_token`, when the record has one.
    package let idToken: SealedSecret?

    /// Keeps the sealed secrets of one record.
    init(accessToken: SealedSecret, refreshToken: SealedSecret?, tokenSecret: SealedSecret?, idToken: SealedSecret? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.tokenSecret = tokenSecret
        self.idToken = idToken
    }

    /// Every sealed secret of the record, `access_token` first.
    package var all: [SealedSecret] {
        [accessToken] + [refreshToken, tokenSecret, idToken].compactMap { $0 }
    }

    /// `account` with these secrets decrypted into it; throws ``StoreError/corrupt(path:reason:)`` naming `path` and the field that fails.
    package func open(into account: Account, path: @autoclosure () -> String) throws(StoreError) -> Account {
        try open(into: account, path: path) { _ in nil }
    }

    /// The same, with the key bytes taken from `keys`, the calling thread's own copies.
    package func open(into account: Account, path: @autoclosure () -> String, keys: inout KeyCopies) throws(StoreError) -> Account {
        try open(into: account, path: path) { keys.bytes(of: $0) }
    }

    private func open(
        into account: Account, path: () -> String,
        keyBytes: (EncryptionKey) -> [UInt8]?
    ) throws(StoreError) -> Account {
        let id = account.id
        var account = account
        func open(_ secret: SealedSecret, _ field: AccountRecordField) throws(StoreError) -> Secret {
            Secret(try secret.open(accountID: id, field: field.stringValue, path: path(), keyBytes: keyBytes(secret.key)))
        }
        account.accessToken = try open(accessToken, .accessToken)
        account.refreshToken = try refreshToken.map { secret throws(StoreError) in try open(secret, .refreshToken) }
        account.tokenSecret = try tokenSecret.map { secret throws(StoreError) in try open(secret, .tokenSecret) }
        account.idToken = try idToken.map { secret throws(StoreError) in try open(secret, .idToken) }
        return account
    }
}

/// One thread's own copies of key bytes, by key id, so that parallel openers share no reference-counted buffer.
package struct KeyCopies {
    private var copies: [String: [UInt8]] = [:]

    /// An empty set of copies.
    package init() {}

    /// The bytes of `key` in a buffer only this value holds.
    package mutating func bytes(of key: EncryptionKey) -> [UInt8] {
        if let copy = copies[key.id] { return copy }
        // `Array(key.bytes)` would share the buffer; building it byte by byte makes a new one.
        let copy = [UInt8](unsafeUninitializedCapacity: key.bytes.count) { buffer, count in
            for (index, byte) in key.bytes.enumerated() { buffer[index] = byte }
            count = key.bytes.count
        }
        copies[key.id] = copy
        return copy
    }
}

/// The ids of the keys a sealed record's secrets are sealed with, read from the record without decoding its envelopes.
package struct SealedKeyIDs: Sendable {
    /// The key of `access_token`.
    package let accessToken: String
    /// The key of `refresh_token`, when the record has one.
    package let refreshToken: String?
    /// The key of `token_secret`, when the record has one.
    package let tokenSecret: String?
    /// The key of `id_token`, when the record has one.
    package let idToken: String?

    /// Every key id, `access_token`'s first, once per sealed secret.
    package var all: [String] {
        [accessToken] + [refreshToken, tokenSecret, idToken].compactMap { $0 }
    }
}
