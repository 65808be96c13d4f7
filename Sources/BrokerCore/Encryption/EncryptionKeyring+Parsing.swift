import BrokerCrypto

extension EncryptionKeyring {
    /// Parses a key setting: one base64 key, or a comma-separated list of `[id:]BASE64` entries, current first.
    ///
    /// Each key is 32 bytes in standard base64 (padded) or base64url. An entry
    /// without an id gets ``EncryptionKey/derivedID(for:)``, so a single key needs
    /// no id. Whitespace around entries is ignored. Throws
    /// ``EncryptionKeyError`` naming `source` and the 1-based entry for an empty
    /// setting, an empty entry, a bad id, bad base64, a key that is not 32 bytes
    /// or an id listed twice; the message never quotes key text.
    public static func parse(_ value: String, source: String = environmentVariable) throws(EncryptionKeyError) -> EncryptionKeyring {
        let entries = value.split(separator: ",", omittingEmptySubsequences: false).map(trimmed)
        guard entries.contains(where: { !$0.isEmpty }) else {
            throw EncryptionKeyError(source: source, entry: nil, problem: "is empty; \(EncryptionKeyError.hint)")
        }
        var keys: [EncryptionKey] = []
        for (offset, entry) in entries.enumerated() {
            let key = try parseEntry(entry, source: source, position: offset + 1)
            if let first = keys.firstIndex(where: { $0.id == key.id }) {
                throw EncryptionKeyError(
                    source: source, entry: offset + 1,
                    problem: "key id \"\(key.id)\" is already used by entry \(first + 1); ids must be unique")
            }
            keys.append(key)
        }
        return EncryptionKeyring(keys: keys, source: source)
    }

    /// One `[id:]BASE64` entry.
    private static func parseEntry(_ entry: String, source: String, position: Int) throws(EncryptionKeyError) -> EncryptionKey {
        func failure(_ problem: String) -> EncryptionKeyError {
            EncryptionKeyError(source: source, entry: position, problem: problem)
        }
        guard !entry.isEmpty else { throw failure("is empty (a stray comma?)") }
        // Base64 never contains ':', so the first ':' can only separate an id from the key.
        let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let explicitID = parts.count == 2 ? trimmed(parts[0]) : nil
        let text = trimmed(parts[parts.count - 1])
        if let explicitID, !EncryptionKey.isValidID(explicitID) {
            throw failure("the key id must be 1 to 64 letters, digits, '.', '_' or '-'")
        }
        guard let bytes = Base64.decode(text) ?? Base64URL.decode(text), !text.isEmpty else {
            throw failure("the key is not valid base64; \(EncryptionKeyError.hint)")
        }
        guard bytes.count == EncryptionKey.byteCount else {
            throw failure("the key is \(bytes.count) bytes, it must be \(EncryptionKey.byteCount); \(EncryptionKeyError.hint)")
        }
        return EncryptionKey(id: explicitID ?? EncryptionKey.derivedID(for: bytes), bytes: bytes)
    }

    /// `text` without leading or trailing spaces, tabs, carriage returns or newlines.
    private static func trimmed(_ text: Substring) -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let start = text.firstIndex(where: { !isBlank($0) }), let end = text.lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(text[start...end])
    }

    /// `text` without surrounding whitespace.
    private static func trimmed(_ text: String) -> String {
        trimmed(Substring(text))
    }
}
