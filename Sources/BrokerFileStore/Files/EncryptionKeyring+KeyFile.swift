import BrokerCore
import BrokerCrypto

extension EncryptionKeyring {
    /// The name of the key file generated in the data directory when `BROKER_ENCRYPTION_KEY` is unset.
    public static let keyFileName = "encryption-key"

    /// The keyring from `environmentValue`, or, when it is nil, from `<dataDirectory>/encryption-key`, generated once.
    ///
    /// The key file holds one base64 key and a newline, mode 0600, created
    /// race-free by ``DataDirectory/readOrCreateSecret(named:in:generate:)`` and
    /// read back on every later start. It uses the same syntax as the
    /// variable, so its content can be moved into `BROKER_ENCRYPTION_KEY` as is.
    /// `generated` is true whenever the keyring comes from that file: the caller
    /// should warn that the key lives beside the data it protects. An empty
    /// `environmentValue` is an error, not "unset". Throws
    /// ``EncryptionKeyError`` for a bad value or key file, or ``StoreError`` when
    /// the data directory or key file cannot be created or read.
    public static func loadOrGenerate(
        environmentValue: String?,
        dataDirectory: String,
        randomBytes: (Int) -> [UInt8] = SecureRandom.bytes
    ) throws -> (keyring: EncryptionKeyring, generated: Bool) {
        if let environmentValue {
            return (try parse(environmentValue), false)
        }
        try DataDirectory.prepare(dataDirectory)
        let path = dataDirectory + "/" + keyFileName
        let content = try DataDirectory.readOrCreateSecret(named: keyFileName, in: dataDirectory) {
            Array((Base64.encode(randomBytes(EncryptionKey.byteCount)) + "\n").utf8)
        }
        guard let text = String(validating: content, as: UTF8.self) else {
            throw EncryptionKeyError(source: path, entry: nil, problem: "is not text; \(EncryptionKeyError.hint)")
        }
        return (try parse(text, source: path), true)
    }
}

extension EncryptionKeyring {
    /// The keyring `loadOrGenerate` would use, read without creating anything: from `environmentValue`,
    /// else from an existing `<dataDirectory>/encryption-key`; nil when neither exists yet.
    ///
    /// For dry runs. Throws ``EncryptionKeyError`` for a bad value or key file, ``StoreError`` when the file cannot be read.
    public static func loadExisting(environmentValue: String?, dataDirectory: String) throws -> EncryptionKeyring? {
        if let environmentValue { return try parse(environmentValue) }
        let path = dataDirectory + "/" + keyFileName
        guard let content = try DurableFile.read(path) else { return nil }
        guard let text = String(validating: content, as: UTF8.self) else {
            throw EncryptionKeyError(source: path, entry: nil, problem: "is not text; \(EncryptionKeyError.hint)")
        }
        return try parse(text, source: path)
    }
}
