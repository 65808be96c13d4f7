import BrokerCrypto
import Foundation

extension AccountRecordScanner {
    /// The account in `bytes` as ``EncryptedAccountCodec/storedAccount(_:path:)`` would keep it, built straight from the bytes.
    ///
    /// The common case at start-up, and the fast one: only the strings the
    /// account keeps are built; dates, the marker, the status and the envelopes
    /// are read from the bytes. It returns nil for anything else (a plaintext
    /// record, an escape in a member read as bytes, a key id the keyring does
    /// not hold, anything the codec would reject), and the codec then takes its
    /// general path, which gives the account or the error. So it may decline a
    /// record, but it never accepts one differently.
    static func storedAccount(_ bytes: [UInt8], keyring: EncryptionKeyring) -> StoredAccount? {
        bytes.withUnsafeBufferPointer { storedAccount($0, keyring: keyring) }
    }

    /// The same, for bytes read in place.
    static func storedAccount(_ bytes: UnsafeBufferPointer<UInt8>, keyring: EncryptionKeyring) -> StoredAccount? {
        var scanner = AccountRecordScanner(bytes: bytes)
        return scanner.spans().flatMap { scanner.storedAccount(from: $0, keyring: keyring) }
    }

    /// The sealed account the spans describe, or nil when the record needs the general path.
    func storedAccount(from spans: AccountRecordSpans, keyring: EncryptionKeyring) -> StoredAccount? {
        guard let (readable, secrets) = readable(from: spans, secret: { sealed($0, keyring: keyring) }, build: { $0.account })
        else { return nil }
        return StoredAccount(
            readable: readable,
            sealed: SealedSecrets(
                accessToken: secrets.accessToken, refreshToken: secrets.refreshToken, tokenSecret: secrets.tokenSecret,
                idToken: secrets.idToken))
    }

    /// The readable part of the sealed account in `bytes` and the ids of the keys its secrets are sealed with, checked
    /// as ``storedAccount(_:keyring:)-(UnsafeBufferPointer<UInt8>,_)`` checks the record (each envelope's key id, the
    /// Base64 of its nonce and ciphertext and their lengths) but without decoding the envelopes: the caller keeps the
    /// record and decodes them when it opens the account. Nil wherever that would give nil. The account comes
    /// compacted (``CompactAccount``), built from the fields read without an ``Account`` in between.
    static func sealedKeyIDs(
        _ bytes: UnsafeBufferPointer<UInt8>, keyring: EncryptionKeyring, reusing shared: CompactAccount.Shared? = nil
    ) -> (readable: CompactAccount, keyIDs: SealedKeyIDs)? {
        sealedKeyIDs(bytes, keyIDs: keyring.keys.map(\.id), reusing: shared)
    }

    /// ``sealedKeyIDs(_:keyring:reusing:)`` with the ids of the keyring's keys (``SealedRecordReader``'s own copies).
    static func sealedKeyIDs(
        _ bytes: UnsafeBufferPointer<UInt8>, keyIDs: [String], reusing shared: CompactAccount.Shared?
    ) -> (readable: CompactAccount, keyIDs: SealedKeyIDs)? {
        var scanner = AccountRecordScanner(bytes: bytes)
        var spans = AccountRecordSpans()
        guard scanner.read(into: &spans) else { return nil }
        guard
            let (readable, keys) = scanner.readable(
                from: spans, secret: { scanner.checkedKeyID($0, keyIDs: keyIDs) }, build: { $0.compact(reusing: shared) })
        else { return nil }
        return (
            readable,
            SealedKeyIDs(
                accessToken: keys.accessToken, refreshToken: keys.refreshToken, tokenSecret: keys.tokenSecret, idToken: keys.idToken)
        )
    }

    /// The readable fields of a record (its secrets as empty placeholders), as ``readable(from:secret:build:)`` read them.
    private struct ReadableFields {
        var provider: String
        var uid: String
        var tokenType: String?
        var scope: String?
        var hasRefreshToken: Bool
        var hasTokenSecret: Bool
        var screenName: String?
        var expiresAt: Date?
        var createdAt: Date
        var updatedAt: Date
        var refreshedAt: Date?
        var status: AccountStatus
        var issuedAt: Date?
        var refreshTokenExpiresAt: Date?
        var hasIDToken: Bool
        var extras: String?
        var endUserID: String?
        var endUserEmail: String?
        var endUserName: String?
        var tags: [String: String]
        var settings: [String: String]
        var metadata: String?

        /// The readable account.
        var account: Account {
            Account(
                provider: provider, uid: uid, accessToken: Secret(""), tokenType: tokenType, scope: scope,
                refreshToken: hasRefreshToken ? Secret("") : nil, tokenSecret: hasTokenSecret ? Secret("") : nil,
                screenName: screenName, expiresAt: expiresAt, createdAt: createdAt, updatedAt: updatedAt,
                refreshedAt: refreshedAt, status: status, issuedAt: issuedAt, refreshTokenExpiresAt: refreshTokenExpiresAt,
                idToken: hasIDToken ? Secret("") : nil, extras: extras,
                endUser: endUserID.map { EndUser(id: $0, email: endUserEmail, name: endUserName) }, tags: tags,
                settings: settings, metadata: metadata)
        }

        /// The readable account compacted, the same as `CompactAccount(account, reusing: shared)`.
        func compact(reusing shared: CompactAccount.Shared?) -> CompactAccount {
            CompactAccount(
                provider: provider, uid: uid, accessToken: Secret(""), tokenType: tokenType, scope: scope,
                refreshToken: hasRefreshToken ? Secret("") : nil, tokenSecret: hasTokenSecret ? Secret("") : nil,
                screenName: screenName, expiresAt: expiresAt, createdAt: createdAt, updatedAt: updatedAt,
                refreshedAt: refreshedAt, status: status, issuedAt: issuedAt, refreshTokenExpiresAt: refreshTokenExpiresAt,
                idToken: hasIDToken ? Secret("") : nil, extras: extras, endUserID: endUserID, endUserEmail: endUserEmail,
                endUserName: endUserName, tags: tags, settings: settings, metadata: metadata, reusing: shared)
        }
    }

    /// What `build` makes of the readable fields the spans describe (secrets as empty placeholders) and what `secret`
    /// makes of each sealed secret; nil when the record needs the general path.
    private func readable<Sealed, Built>(
        from spans: AccountRecordSpans, secret: (AccountRecordSpans.SecretValue) -> Sealed?,
        build: (borrowing ReadableFields) -> Built
    ) -> (Built, (accessToken: Sealed, refreshToken: Sealed?, tokenSecret: Sealed?, idToken: Sealed?))? {
        func optionalSealed(_ value: AccountRecordSpans.SecretValue?) -> Sealed?? {
            guard let value else { return .some(nil) }
            return secret(value).map { .some($0) }
        }
        guard spans.version == PlainJSONAccountCodec.version,
            let marker = spans.encryption, !marker.escaped, Self.matches(raw(marker), EncryptedAccountCodec.algorithm),
            let accessToken = spans.accessToken.flatMap(secret),
            let refreshToken = optionalSealed(spans.refreshToken),
            let tokenSecret = optionalSealed(spans.tokenSecret),
            let idToken = optionalSealed(spans.idToken),
            let issuedAt = optionalDate(spans.issuedAt), let refreshTokenExpiresAt = optionalDate(spans.refreshTokenExpiresAt),
            let extras = optionalText(spans.extras),
            let status = spans.status.flatMap(status),
            let createdAt = spans.createdAt.flatMap(date), let updatedAt = spans.updatedAt.flatMap(date),
            let expiresAt = optionalDate(spans.expiresAt), let refreshedAt = optionalDate(spans.refreshedAt),
            let provider = spans.provider.flatMap(text), let uid = spans.uid.flatMap(text),
            let tokenType = optionalText(spans.tokenType), let scope = optionalText(spans.scope),
            let screenName = optionalText(spans.screenName),
            let endUserID = optionalText(spans.endUserID), let endUserEmail = optionalText(spans.endUserEmail),
            let endUserName = optionalText(spans.endUserName), let tags = tags(spans.tags),
            let settings = self.tags(spans.settings), let metadata = optionalText(spans.metadata)
        else { return nil }
        if let id = spans.id {
            // The codec compares strings; equal bytes are equal strings, and anything else goes the general way.
            guard
                id.escaped
                    ? text(id).map({ $0.utf8.elementsEqual(AccountID(provider: provider, uid: uid).string.utf8) }) ?? false
                    : spellsID(raw(id), provider: provider, uid: uid)
            else {
                return nil
            }
        }
        let fields = ReadableFields(
            provider: provider, uid: uid, tokenType: tokenType, scope: scope, hasRefreshToken: refreshToken != nil,
            hasTokenSecret: tokenSecret != nil, screenName: screenName, expiresAt: expiresAt, createdAt: createdAt,
            updatedAt: updatedAt, refreshedAt: refreshedAt, status: status, issuedAt: issuedAt,
            refreshTokenExpiresAt: refreshTokenExpiresAt, hasIDToken: idToken != nil, extras: extras, endUserID: endUserID,
            endUserEmail: endUserEmail, endUserName: endUserName, tags: tags ?? [:], settings: settings ?? [:],
            metadata: metadata)
        return (build(fields), (accessToken, refreshToken, tokenSecret, idToken))
    }

    /// The id of the key of an envelope that ``sealed(_:keyring:)`` would accept, found without decoding it; else nil.
    private func checkedKeyID(_ value: AccountRecordSpans.SecretValue, keyIDs: [String]) -> String? {
        guard case .sealed(let kid, let nonce, let ct) = value, !kid.escaped, !nonce.escaped, !ct.escaped,
            let keyID = keyIDs.first(where: { Self.matches(raw(kid), $0) })
        else { return nil }
        // The same checks as decoding: a 12-byte nonce (16 symbols without padding decode to 12 bytes) and a
        // ciphertext with room for its tag, every symbol valid.
        guard Base64URL.decodedCount(utf8: raw(nonce)) == ChaCha20Poly1305.nonceByteCount,
            let sealedCount = Base64URL.decodedCount(utf8: raw(ct)), sealedCount >= ChaCha20Poly1305.tagByteCount
        else { return nil }
        return keyID
    }

    /// Whether `bytes` are those of the account id `provider:uid`, compared without building the id.
    private func spellsID(_ bytes: UnsafeBufferPointer<UInt8>, provider: String, uid: String) -> Bool {
        var provider = provider
        var uid = uid
        return provider.withUTF8 { provider in
            uid.withUTF8 { uid in
                bytes.count == provider.count + 1 + uid.count && bytes[provider.count] == UInt8(ascii: ":")
                    && Self.same(UnsafeBufferPointer(rebasing: bytes[..<provider.count]), provider)
                    && Self.same(UnsafeBufferPointer(rebasing: bytes[(provider.count + 1)...]), uid)
            }
        }
    }

    /// An envelope with a key of `keyring`, a 12-byte nonce and a ciphertext with room for its tag; else nil.
    private func sealed(_ value: AccountRecordSpans.SecretValue, keyring: EncryptionKeyring) -> SealedSecret? {
        guard case .sealed(let kid, let nonce, let ct) = value, !kid.escaped, !nonce.escaped, !ct.escaped,
            let key = keyring.keys.first(where: { Self.matches(raw(kid), $0.id) })
        else { return nil }
        let nonceSymbols = raw(nonce)
        let sealedSymbols = raw(ct)
        // A 12-byte nonce is 16 symbols without padding, four whole groups: decoded together with the ciphertext, the
        // symbols give the envelope the secret keeps in one buffer, with the same checks as decoded one by one.
        if nonceSymbols.count == 16 && !nonceSymbols.contains(UInt8(ascii: "=")) {
            let envelope = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16 + sealedSymbols.count) { symbols in
                _ = UnsafeMutableBufferPointer(rebasing: symbols[..<16]).initialize(fromContentsOf: nonceSymbols)
                _ = UnsafeMutableBufferPointer(rebasing: symbols[16...]).initialize(fromContentsOf: sealedSymbols)
                return Base64URL.decode(utf8: UnsafeBufferPointer(symbols))
            }
            guard let envelope, envelope.count >= ChaCha20Poly1305.nonceByteCount + ChaCha20Poly1305.tagByteCount else { return nil }
            return SealedSecret(key: key, envelope: envelope)
        }
        guard let nonceBytes = Base64URL.decode(utf8: raw(nonce)), nonceBytes.count == ChaCha20Poly1305.nonceByteCount,
            let sealedBytes = Base64URL.decode(utf8: raw(ct)), sealedBytes.count >= ChaCha20Poly1305.tagByteCount
        else { return nil }
        return SealedSecret(key: key, nonce: nonceBytes, sealed: sealedBytes)
    }

    /// The status whose raw value the bytes spell.
    private func status(_ span: AccountRecordSpans.Text) -> AccountStatus? {
        guard !span.escaped else { return nil }
        // The first and third bytes pick the candidate (a status this does not know is declined, for the general path).
        let bytes = raw(span)
        let candidate: AccountStatus
        if bytes.first == UInt8(ascii: "a") {
            candidate = .active
        } else if bytes.first == UInt8(ascii: "i") {
            candidate = .invalid
        } else if bytes.count > 2 && bytes[bytes.startIndex + 2] == UInt8(ascii: "f") {
            candidate = .refreshExhausted
        } else {
            candidate = .reauthorizationRequired
        }
        return Self.matches(bytes, candidate.rawValue) ? candidate : nil
    }

    /// The RFC 3339 date the bytes spell.
    private func date(_ span: AccountRecordSpans.Text) -> Date? {
        span.escaped ? nil : RFC3339Date.parse(utf8: raw(span))
    }

    /// An absent date (nil inside) or a valid one; nil when present but not a date.
    private func optionalDate(_ span: AccountRecordSpans.Text?) -> Date?? {
        guard let span else { return .some(nil) }
        return date(span).map { .some($0) }
    }

    /// An absent string (nil inside) or its decoded text; nil when present but not valid.
    private func optionalText(_ span: AccountRecordSpans.Text?) -> String?? {
        guard let span else { return .some(nil) }
        return text(span).map { .some($0) }
    }
}
