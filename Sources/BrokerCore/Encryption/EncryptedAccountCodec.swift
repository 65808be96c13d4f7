import BrokerCrypto

/// Stores an account as the readable JSON of ``PlainJSONAccountCodec`` with every secret sealed by ChaCha20-Poly1305 (RFC 8439).
///
/// `access_token`, `refresh_token`, `token_secret` and `id_token` become
/// `{"ct": …, "kid": …, "nonce": …}` envelopes sealed with the keyring's current
/// key and a fresh random nonce per field and write; the associated data
/// `tb1|<account id>|<field name>` ties each envelope to its record and field.
/// Every other field stays readable, and the record is marked
/// `"encryption": "chacha20-poly1305"`.
///
/// Reading accepts records sealed with any key of the keyring, and plaintext
/// records of earlier versions; the next write seals them with the current key.
/// A record whose key is missing, or that fails authentication (wrong key,
/// tampered bytes, an envelope moved from another record or field), throws
/// ``StoreError/corrupt(path:reason:)`` naming the file and the field, so the
/// repository stops start-up and overwrites nothing.
public struct EncryptedAccountCodec: AccountRecordCodec, StoredAccountDecoding {
    /// The value of the record's `encryption` field.
    public static let algorithm = "chacha20-poly1305"

    /// The keys this codec seals with (the current one) and opens with (all).
    public let keyring: EncryptionKeyring
    /// Where nonces come from; `SecureRandom.bytes` outside tests.
    let randomBytes: @Sendable (Int) -> [UInt8]

    /// Creates a codec sealing with `keyring.current`, drawing nonces from `randomBytes`.
    ///
    /// RFC 8439 §4 forbids ever reusing a (key, nonce) pair; 96-bit random
    /// nonces keep the chance of a repeat negligible for far more writes than
    /// any account store sees (NIST SP 800-38D §8.3 allows 2³² per key).
    public init(keyring: EncryptionKeyring, randomBytes: @escaping @Sendable (Int) -> [UInt8] = SecureRandom.bytes) {
        self.keyring = keyring
        self.randomBytes = randomBytes
    }

    /// True: every record this codec writes is sealed.
    public var sealsSecrets: Bool { true }

    /// Its own: records are checked at once, their secrets opened on first use.
    public var deferredDecoding: DeferredAccountDecoding? { DeferredAccountDecoding(self) }

    /// The JSON document for `account` with its secrets sealed, ending in a newline.
    public func encode(_ account: Account) throws(StoreError) -> [UInt8] {
        let id = account.id
        var record = PlainJSONAccountCodec.record(for: account).mapSecrets { secret, field in
            EncryptedFieldValue.sealed(seal(secret, accountID: id, field: field.stringValue))
        }
        record.encryption = Self.algorithm
        return try JSONRecord.encode(record)
    }

    /// The account in `bytes`, its secrets opened; throws ``StoreError/corrupt(path:reason:)`` naming `path` on any failure.
    public func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> Account {
        try storedAccount(bytes, path: path).opened(path: path)
    }

    /// The account in `bytes` as the file store keeps it: checked in full, but its secrets not yet decrypted.
    ///
    /// A plaintext record of an earlier version is decoded at once. For a sealed
    /// one every check but the decryption happens here (version, marker,
    /// status, dates, id, and each envelope's key id, nonce and ciphertext
    /// length), so a record that fails here would never have decoded; the
    /// decryption runs in ``StoredAccount/opened(path:)``.
    package func storedAccount(_ bytes: [UInt8], path: @autoclosure () -> String) throws(StoreError) -> StoredAccount {
        if let stored = AccountRecordScanner.storedAccount(bytes, keyring: keyring) { return stored }
        return try checkedStoredAccount(bytes, path: path())
    }

    /// ``storedAccount(_:path:)`` reading `bytes` in place; only a record the scanner declines is copied.
    package func storedAccount(reading bytes: UnsafeRawBufferPointer, path: @autoclosure () -> String) throws(StoreError) -> StoredAccount {
        if let stored = AccountRecordScanner.storedAccount(bytes.assumingMemoryBound(to: UInt8.self), keyring: keyring) { return stored }
        return try checkedStoredAccount([UInt8](bytes), path: path())
    }

    /// The readable part and key ids of a sealed record in `bytes`, its envelopes checked but not decoded.
    package func readableAccount(
        reading bytes: UnsafeRawBufferPointer, reusing shared: CompactAccount.Shared?
    ) -> (readable: CompactAccount, keyIDs: SealedKeyIDs)? {
        AccountRecordScanner.sealedKeyIDs(bytes.assumingMemoryBound(to: UInt8.self), keyring: keyring, reusing: shared)
    }

    /// A reader of sealed records for one thread, with its own copy of the keyring's key ids.
    package func sealedRecordReader() -> SealedRecordReader? {
        SealedRecordReader(keyring: keyring)
    }

    /// ``storedAccount(_:path:)`` the general way: the JSON model first (scanner or JSONDecoder), then every check.
    ///
    /// The reference for the scanner's fast path, and the source of every error message.
    func checkedStoredAccount(_ bytes: [UInt8], path: String) throws(StoreError) -> StoredAccount {
        let stored = try Self.parse(bytes, path: path)
        guard stored.encryption != nil else {
            let plain = try stored.mapSecrets { value, field throws(StoreError) in
                try plaintext(value, field: field.stringValue, path: path)
            }
            return StoredAccount(try PlainJSONAccountCodec.account(from: plain, path: path))
        }
        let envelopes = try stored.mapSecrets { value, field throws(StoreError) in try envelope(value, field: field.stringValue, path: path)
        }
        let readable = try PlainJSONAccountCodec.account(from: stored.mapSecrets { _, _ in "" }, path: path)
        return StoredAccount(
            readable: readable,
            sealed: SealedSecrets(
                accessToken: envelopes.accessToken, refreshToken: envelopes.refreshToken, tokenSecret: envelopes.tokenSecret,
                idToken: envelopes.idToken))
    }

    /// The account the sealed record for `account` decodes to: sealing and opening give the secrets back
    /// unchanged, so this is the plain record's account, without sealing, JSON or opening.
    public func stored(_ account: Account, path: String) throws(StoreError) -> Account {
        try PlainJSONAccountCodec().stored(account, path: path)
    }

    /// Whether the record in `bytes` is plaintext or has a field sealed with a key other than the current one.
    ///
    /// Reads only the envelopes' key ids, without decrypting; throws
    /// ``StoreError/corrupt(path:reason:)`` when the record does not parse.
    public func needsRekey(_ bytes: [UInt8], path: String) throws(StoreError) -> Bool {
        let stored = try Self.parse(bytes, path: path)
        guard stored.encryption != nil else { return true }
        return stored.secrets.contains { secret in
            guard case .sealed(let field) = secret.value else { return true }
            return field.kid != keyring.current.id
        }
    }

    /// The record in `bytes` (read by ``AccountRecordScanner``, or by JSONDecoder when it declines), checked for a supported version and encryption marker.
    private static func parse(_ bytes: [UInt8], path: String) throws(StoreError) -> AccountRecord<EncryptedFieldValue> {
        let stored: AccountRecord<EncryptedFieldValue>
        if let scanned = AccountRecordScanner.scan(bytes) {
            stored = scanned
        } else {
            stored = try JSONRecord.decode(AccountRecord<EncryptedFieldValue>.self, from: bytes, path: path)
        }
        guard stored.version == PlainJSONAccountCodec.version else {
            throw .corrupt(path: path, reason: "unsupported record version \(stored.version)")
        }
        guard stored.encryption == nil || stored.encryption == algorithm else {
            throw .corrupt(path: path, reason: "unsupported \"encryption\" (this version reads \"\(algorithm)\")")
        }
        return stored
    }
}
