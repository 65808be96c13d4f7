import BrokerCrypto

extension EncryptedAccountCodec {
    /// The associated data binding a sealed field to its record and field: `tb1|<account id>|<field name>`.
    ///
    /// RFC 8439 §2.8: the AAD is authenticated but not encrypted, so an envelope
    /// copied into another record or field fails to open. Field names never
    /// contain `|`, so the last `|` always separates the field from the id.
    static func associatedData(accountID: String, field: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(accountID.utf8.count + field.utf8.count + 5)
        bytes += "tb1|".utf8
        bytes += accountID.utf8
        bytes.append(UInt8(ascii: "|"))
        bytes += field.utf8
        return bytes
    }

    /// `secret` sealed with the current key under a fresh random nonce.
    func seal(_ secret: String, accountID: String, field: String) -> EncryptedField {
        let key = keyring.current
        let nonce = randomBytes(ChaCha20Poly1305.nonceByteCount)
        let sealed = ChaCha20Poly1305.seal(
            key: key.bytes, nonce: nonce, plaintext: Array(secret.utf8),
            aad: Self.associatedData(accountID: accountID, field: field))
        return EncryptedField(kid: key.id, nonce: Base64URL.encode(nonce), ct: Base64URL.encode(sealed.ciphertext + sealed.tag))
    }

    /// The plaintext of one secret field, or a corrupt-record error naming `path` and `field`.
    ///
    /// In a record marked encrypted every secret must be sealed, and in an
    /// unmarked (earlier version) record every secret must be plaintext, so
    /// stripping the marker or a field's envelope cannot pass unnoticed.
    func open(_ value: EncryptedFieldValue, sealedRecord: Bool, accountID: String, field: String, path: String) throws(StoreError) -> String
    {
        guard sealedRecord else { return try plaintext(value, field: field, path: path) }
        return try envelope(value, field: field, path: path).open(accountID: accountID, field: field, path: path)
    }

    /// The secret of a record without the `encryption` marker, which must be plaintext.
    func plaintext(_ value: EncryptedFieldValue, field: String, path: String) throws(StoreError) -> String {
        switch value {
        case .plaintext(let text): return text
        case .sealed: throw .corrupt(path: path, reason: "\(field) is sealed but the record has no \"encryption\" field")
        }
    }

    /// The envelope of a record marked encrypted, checked but not opened: sealed, with a key of the keyring and a well-formed nonce and ciphertext.
    func envelope(_ value: EncryptedFieldValue, field: String, path: String) throws(StoreError) -> SealedSecret {
        func corrupt(_ reason: String) -> StoreError { .corrupt(path: path, reason: reason) }
        switch value {
        case .plaintext:
            throw corrupt("\(field) is plaintext in a record marked \"encryption\": \"\(Self.algorithm)\"")
        case .sealed(let envelope):
            guard let key = keyring.key(id: envelope.kid) else {
                throw corrupt(
                    "\(field) is sealed with key id \"\(envelope.kid)\", which \(keyring.source) does not hold "
                        + "(it holds \(keyring.ids.joined(separator: ", "))); list that key after the current one")
            }
            guard let nonce = Base64URL.decode(envelope.nonce), nonce.count == ChaCha20Poly1305.nonceByteCount else {
                throw corrupt("\(field) has a malformed nonce")
            }
            guard let sealed = Base64URL.decode(envelope.ct), sealed.count >= ChaCha20Poly1305.tagByteCount else {
                throw corrupt("\(field) has a malformed ciphertext")
            }
            return SealedSecret(key: key, nonce: nonce, sealed: sealed)
        }
    }
}
