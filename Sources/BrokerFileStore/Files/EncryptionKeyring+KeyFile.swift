import BrokerCore
import BrokerCrypto
import Glibc

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
    /// `environmentValue` is an error, not "unset". No key is generated for a directory that already holds sealed
    /// accounts (a restored backup, a copied directory): that is a missing key, reported as such. Throws
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
        // A directory whose accounts are sealed but whose key file is gone (a restore, a copy, a key kept only in the
        // variable) must not get a new key: its records would not open, and would be reported as damaged.
        if try DurableFile.read(path) == nil, try holdsSealedAccounts(dataDirectory) {
            throw missingKey(dataDirectory: dataDirectory)
        }
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

extension EncryptionKeyring {
    /// How much of each account file is read to see whether its records are sealed.
    private static let sniffedBytes = 65_536

    /// The error for a directory of sealed accounts found with neither `BROKER_ENCRYPTION_KEY` nor its key file: it names
    /// both places the key was looked for, and says that none was generated.
    package static func missingKey(dataDirectory: String) -> EncryptionKeyError {
        let path = dataDirectory + "/" + keyFileName
        return EncryptionKeyError(
            source: path, entry: nil,
            problem: "missing encryption key: \(dataDirectory) holds sealed accounts, but \(environmentVariable) is not set "
                + "and there is no key file at \(path). Give the key of the broker that wrote them, in "
                + "\(environmentVariable) or copied to \(path); no key was generated and nothing was changed")
    }

    /// Whether `directory` holds account records sealed with some key: it carries ``SealedStoreMarker`` (written by
    /// every broker that seals, and by a restore of sealed records), or the start of its snapshot, a journal or a file
    /// of the former `accounts/` layout has a sealed record (only those have an `"encryption"` member).
    /// A directory that does not exist holds none.
    package static func holdsSealedAccounts(_ directory: String) throws(StoreError) -> Bool {
        var status = stat()
        guard stat(directory, &status) == 0 else { return false }
        if try SealedStoreMarker.isPresent(in: directory) { return true }
        var candidates: [String] = []
        for name in try DirectoryListing.names(in: directory)
        where name == AccountStoreFormat.snapshotName || AccountStoreFormat.journalGeneration(name) != nil {
            candidates.append(directory + "/" + name)
        }
        let former = directory + "/" + AccountStoreFormat.legacyDirectoryName
        if stat(former, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
            candidates += try DirectoryListing.names(in: former).filter { $0.hasSuffix(".json") }.prefix(1).map { former + "/" + $0 }
        }
        return candidates.contains { startsWithSealedRecord($0) }
    }

    /// Whether the first ``sniffedBytes`` of the file at `path` mention a sealed record; false when it cannot be read.
    private static func startsWithSealedRecord(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: sniffedBytes)
        var filled = 0
        while filled < buffer.count {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count > 0 {
                filled += count
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        // The member name, then optional blanks (pretty-printed files of the former layout) and a colon: a member, not a value.
        let needle = Array("\"encryption\"".utf8)
        guard filled > needle.count else { return false }
        for start in 0..<(filled - needle.count) where buffer[start..<start + needle.count].elementsEqual(needle) {
            var next = start + needle.count
            while next < filled && (buffer[next] == 0x20 || buffer[next] == 0x0A || buffer[next] == 0x09) { next += 1 }
            if next < filled && buffer[next] == UInt8(ascii: ":") { return true }
        }
        return false
    }
}
