import BrokerCore
import BrokerFileStore
import Foundation
import Glibc

/// Data directories in the layout the previous version of the file store wrote, for migration checks and benchmarks.
enum LegacySeed {
    /// Writes `count` sealed accounts `weibo:0` … as one JSON file each under `<dir>/accounts/` (the former layout),
    /// with the key in BROKER_ENCRYPTION_KEY or the directory's key file; synced once at the end, not per file.
    static func seed(_ dir: String, count: Int) throws {
        try DataDirectory.prepare(dir)
        let (keyring, _) = try EncryptionKeyring.loadOrGenerate(
            environmentValue: ProcessInfo.processInfo.environment["BROKER_ENCRYPTION_KEY"], dataDirectory: dir)
        let codec = EncryptedAccountCodec(keyring: keyring)
        let legacy = dir + "/" + AccountStoreFormat.legacyDirectoryName
        try DataDirectory.prepare(legacy)
        let now = Date()
        for i in 0..<count {
            let account = StoreBench.account(i, now: now)
            let bytes = try codec.encode(account)
            let path = legacy + "/" + StoreFileName.forAccount(id: account.id)
            let descriptor = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw StoreError.posix("create", path) }
            defer { close(descriptor) }
            guard bytes.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
                throw StoreError.posix("write", path)
            }
        }
        sync()
    }
}
