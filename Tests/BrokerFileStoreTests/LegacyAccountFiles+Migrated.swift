import BrokerFileStore
import BrokerTestSupport
import Foundation

extension LegacyAccountFiles {
    /// Whether `directory` was migrated: a snapshot in place, `accounts/` gone and its files under `accounts.migrated/`.
    static func wasMigrated(_ directory: String) -> Bool {
        let manager = FileManager.default
        return manager.fileExists(atPath: directory + "/" + AccountStoreFormat.snapshotName)
            && !manager.fileExists(atPath: directory + "/accounts") && manager.fileExists(atPath: directory + "/accounts.migrated")
    }
}
