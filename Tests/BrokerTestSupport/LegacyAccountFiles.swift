import BrokerCore
import BrokerFileStore
import Foundation
import Glibc

/// Data directories as the previous version of the file store left them: one pretty-printed JSON file per account under `accounts/`.
public enum LegacyAccountFiles {
    /// Writes `accounts` under `<directory>/accounts/` the way the previous version did (`<percent-encoded id>.json`,
    /// the codec's bytes, mode 0600); not synced, for speed. Returns the directory.
    @discardableResult
    public static func write(_ accounts: [Account], codec: some AccountRecordCodec, in directory: String) throws -> String {
        let legacy = directory + "/accounts"
        try FileManager.default.createDirectory(atPath: legacy, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for account in accounts {
            let path = legacy + "/" + StoreFileName.forAccount(id: account.id)
            guard
                FileManager.default.createFile(
                    atPath: path, contents: Data(try codec.encode(account)), attributes: [.posixPermissions: 0o600])
            else { throw CocoaError(.fileWriteUnknown) }
        }
        return legacy
    }
}
