import BrokerCore
import BrokerFileStore
import Foundation

/// The former layout of the account store, one record file per account under `accounts/`, as the previous version wrote it.
enum LegacyAccountFiles {
    /// Writes `accounts` with `codec` as record files under `directory/accounts/` (without fsync), as an earlier run left them.
    static func plant(_ accounts: [Account], codec: some AccountRecordCodec = PlainJSONAccountCodec(), in directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory + "/accounts", withIntermediateDirectories: true)
        for account in accounts {
            try Data(codec.encode(account)).write(to: URL(fileURLWithPath: path(of: account.id, in: directory)))
        }
    }

    /// Where the previous version kept the record of account `id`.
    static func path(of id: String, in directory: String) -> String {
        directory + "/accounts/" + StoreFileName.forAccount(id: id)
    }

    /// Whether `directory` was migrated: a snapshot in place, `accounts/` gone and its files under `accounts.migrated/`.
    static func wasMigrated(_ directory: String) -> Bool {
        let manager = FileManager.default
        return manager.fileExists(atPath: directory + "/" + AccountStoreFormat.snapshotName)
            && !manager.fileExists(atPath: directory + "/accounts") && manager.fileExists(atPath: directory + "/accounts.migrated")
    }
}
