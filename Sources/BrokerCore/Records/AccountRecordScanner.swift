/// Reads an account record without `JSONDecoder`, so that start-up with many records stays fast.
///
/// It accepts one JSON object (RFC 8259) holding the record's own members,
/// each at most once, with the value types ``AccountRecord`` with ``EncryptedFieldValue`` secrets
/// declares: strings with any escapes, `null` for an optional member, a
/// non-negative integer `version`, and `{"ct", "kid", "nonce"}` envelopes for
/// the secrets. For anything else (an unknown or repeated member, a fraction or
/// exponent, a missing member, invalid UTF-8, bytes after the object) it returns
/// nil and the caller decodes with `JSONDecoder`, whose result and error
/// messages stay the reference: the scanner is faster, never more lenient.
struct AccountRecordScanner {
    /// A member name of the record.
    typealias Key = AccountRecordField

    /// The record file's bytes.
    let bytes: UnsafeBufferPointer<UInt8>
    /// The next byte to read.
    var position = 0

    /// The record in `bytes`, or nil when they are outside the subset this scanner reads.
    static func scan(_ bytes: [UInt8]) -> AccountRecord<EncryptedFieldValue>? {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = AccountRecordScanner(bytes: buffer)
            return scanner.spans().flatMap(scanner.record(from:))
        }
    }

    /// One pass over the document: one object, then only whitespace; nil when it is outside the subset.
    mutating func spans() -> AccountRecordSpans? {
        var spans = AccountRecordSpans()
        return read(into: &spans) ? spans : nil
    }

    /// ``spans()`` into `spans` (fresh, all nil), without handing the spans (about 400 bytes) back through an optional:
    /// false when the document is outside the subset.
    mutating func read(into spans: inout AccountRecordSpans) -> Bool {
        var seen: UInt32 = 0
        // Spans hold 32-bit offsets; a record this long is left to JSONDecoder.
        guard bytes.count <= UInt32.max, skipSpaceAndTake(.openBrace) else { return false }
        if !skipSpaceAndTake(.closeBrace) {
            repeat {
                skipSpace()
                guard let name = memberName(), let key = Self.key(named: name), seen & Self.bit(key) == 0,
                    skipSpaceAndTake(.colon)
                else { return false }
                seen |= Self.bit(key)
                skipSpace()
                guard readValue(of: key, into: &spans) else { return false }
            } while skipSpaceAndTake(.comma)
            guard skipSpaceAndTake(.closeBrace) else { return false }
        }
        skipSpace()
        return position == bytes.count && spans.hasRequiredMembers
    }

    /// The full JSON model of the record, every string decoded; nil when one is not valid (bad escape, invalid UTF-8).
    func record(from spans: AccountRecordSpans) -> AccountRecord<EncryptedFieldValue>? {
        func optional(_ span: AccountRecordSpans.Text?) -> String?? {
            guard let span else { return .some(nil) }
            return text(span).map { .some($0) }
        }
        func secret(_ value: AccountRecordSpans.SecretValue) -> EncryptedFieldValue? {
            switch value {
            case .plaintext(let span):
                return text(span).map(EncryptedFieldValue.plaintext)
            case .sealed(let kid, let nonce, let ct):
                guard let kid = text(kid), let nonce = text(nonce), let ct = text(ct) else { return nil }
                return .sealed(EncryptedField(kid: kid, nonce: nonce, ct: ct))
            }
        }
        func optionalSecret(_ value: AccountRecordSpans.SecretValue?) -> EncryptedFieldValue?? {
            guard let value else { return .some(nil) }
            return secret(value).map { .some($0) }
        }
        guard let version = spans.version, let accessToken = spans.accessToken.flatMap(secret),
            let refreshToken = optionalSecret(spans.refreshToken), let tokenSecret = optionalSecret(spans.tokenSecret),
            let provider = spans.provider.flatMap(text), let uid = spans.uid.flatMap(text),
            let createdAt = spans.createdAt.flatMap(text), let updatedAt = spans.updatedAt.flatMap(text),
            let status = spans.status.flatMap(text),
            let encryption = optional(spans.encryption), let id = optional(spans.id),
            let tokenType = optional(spans.tokenType), let scope = optional(spans.scope),
            let screenName = optional(spans.screenName), let expiresAt = optional(spans.expiresAt),
            let refreshedAt = optional(spans.refreshedAt), let issuedAt = optional(spans.issuedAt),
            let refreshTokenExpiresAt = optional(spans.refreshTokenExpiresAt), let idToken = optionalSecret(spans.idToken),
            let extras = optional(spans.extras), let endUserID = optional(spans.endUserID),
            let endUserEmail = optional(spans.endUserEmail), let endUserName = optional(spans.endUserName),
            let tags = tags(spans.tags), let settings = self.tags(spans.settings), let metadata = optional(spans.metadata)
        else { return nil }
        return AccountRecord(
            version: version, encryption: encryption, id: id, provider: provider, uid: uid, accessToken: accessToken,
            tokenType: tokenType, scope: scope, refreshToken: refreshToken, tokenSecret: tokenSecret, screenName: screenName,
            expiresAt: expiresAt, createdAt: createdAt, updatedAt: updatedAt, refreshedAt: refreshedAt, status: status,
            issuedAt: issuedAt, refreshTokenExpiresAt: refreshTokenExpiresAt, idToken: idToken, extras: extras,
            endUserID: endUserID, endUserEmail: endUserEmail, endUserName: endUserName, tags: tags,
            settings: settings, metadata: metadata)
    }

    /// The `tags` object decoded, `.some(nil)` when absent; nil when a string does not decode or a key repeats,
    /// which JSONDecoder shall judge.
    func tags(_ spans: [(key: AccountRecordSpans.Text, value: AccountRecordSpans.Text)]?) -> [String: String]?? {
        guard let spans else { return .some(nil) }
        var tags: [String: String] = [:]
        for (keySpan, valueSpan) in spans {
            guard let key = text(keySpan), let value = text(valueSpan), tags.updateValue(value, forKey: key) == nil else { return nil }
        }
        return .some(tags)
    }

    /// Reads the value of member `key` into `spans`; false when it has a type the record does not allow there.
    private mutating func readValue(of key: Key, into spans: inout AccountRecordSpans) -> Bool {
        switch key {
        case .version:
            spans.version = integer()
            return spans.version != nil
        case .accessToken:
            spans.accessToken = secret()
            return spans.accessToken != nil
        case .refreshToken, .tokenSecret, .idToken:
            guard let value = nullOr({ $0.secret() }) else { return false }
            switch key {
            case .refreshToken: spans.refreshToken = value
            case .tokenSecret: spans.tokenSecret = value
            default: spans.idToken = value
            }
            return true
        case .provider, .uid, .createdAt, .updatedAt, .status:
            guard let span = textSpan() else { return false }
            switch key {
            case .provider: spans.provider = span
            case .uid: spans.uid = span
            case .createdAt: spans.createdAt = span
            case .updatedAt: spans.updatedAt = span
            default: spans.status = span
            }
            return true
        case .tags, .settings:
            guard let value = nullOr({ $0.stringObject() }) else { return false }
            if key == .tags { spans.tags = value } else { spans.settings = value }
            return true
        case .encryption, .id, .tokenType, .scope, .screenName, .expiresAt, .refreshedAt, .issuedAt, .refreshTokenExpiresAt,
            .extras, .endUserID, .endUserEmail, .endUserName, .metadata:
            guard let span = nullOr({ $0.textSpan() }) else { return false }
            switch key {
            case .encryption: spans.encryption = span
            case .id: spans.id = span
            case .tokenType: spans.tokenType = span
            case .scope: spans.scope = span
            case .screenName: spans.screenName = span
            case .expiresAt: spans.expiresAt = span
            case .issuedAt: spans.issuedAt = span
            case .refreshTokenExpiresAt: spans.refreshTokenExpiresAt = span
            case .extras: spans.extras = span
            case .endUserID: spans.endUserID = span
            case .endUserEmail: spans.endUserEmail = span
            case .endUserName: spans.endUserName = span
            case .metadata: spans.metadata = span
            default: spans.refreshedAt = span
            }
            return true
        }
    }

    /// A secret: a plaintext string or a sealed envelope with exactly `ct`, `kid` and `nonce`.
    private mutating func secret() -> AccountRecordSpans.SecretValue? {
        if peek(.quote) { return textSpan().map(AccountRecordSpans.SecretValue.plaintext) }
        guard take(.openBrace) else { return nil }
        var ct, kid, nonce: AccountRecordSpans.Text?
        repeat {
            skipSpace()
            guard let name = memberName(), skipSpaceAndTake(.colon) else { return nil }
            skipSpace()
            guard let value = textSpan() else { return nil }
            if Self.spells(name, "ct"), ct == nil {
                ct = value
            } else if Self.spells(name, "kid"), kid == nil {
                kid = value
            } else if Self.spells(name, "nonce"), nonce == nil {
                nonce = value
            } else {
                return nil  // An unknown or repeated envelope member.
            }
        } while skipSpaceAndTake(.comma)
        guard skipSpaceAndTake(.closeBrace), let ct, let kid, let nonce else { return nil }
        return .sealed(kid: kid, nonce: nonce, ct: ct)
    }

    /// An object whose every member is a string (`tags`): names and values as spans, in file order.
    private mutating func stringObject() -> [(key: AccountRecordSpans.Text, value: AccountRecordSpans.Text)]? {
        guard take(.openBrace) else { return nil }
        var members: [(key: AccountRecordSpans.Text, value: AccountRecordSpans.Text)] = []
        if skipSpaceAndTake(.closeBrace) { return members }
        repeat {
            skipSpace()
            guard let name = textSpan(), skipSpaceAndTake(.colon) else { return nil }
            skipSpace()
            guard let value = textSpan() else { return nil }
            members.append((name, value))
        } while skipSpaceAndTake(.comma)
        guard skipSpaceAndTake(.closeBrace) else { return nil }
        return members
    }

    /// `nil` inside for a JSON `null`, else what `read` takes; nil when neither fits.
    private mutating func nullOr<Value>(_ read: (inout AccountRecordScanner) -> Value?) -> Value?? {
        if take(literal: "null") { return .some(nil) }
        return read(&self).map { .some($0) }
    }

    /// The raw bytes of the member name at the cursor; nil for one with escapes, which JSONDecoder shall judge.
    private mutating func memberName() -> UnsafeBufferPointer<UInt8>? {
        guard take(.quote) else { return nil }
        let start = position
        // A word at a time past bytes that are none of quote, backslash or control character (see ``textSpan()``).
        if let base = bytes.baseAddress {
            let words = UnsafeRawPointer(base)
            while bytes.count - position >= 8, !Self.holdsStringDelimiter(words.loadUnaligned(fromByteOffset: position, as: UInt64.self)) {
                position += 8
            }
        }
        while position < bytes.count, bytes[position] != Byte.quote.rawValue {
            if bytes[position] == Byte.backslash.rawValue { return nil }
            position += 1
        }
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<position])
    }
}
