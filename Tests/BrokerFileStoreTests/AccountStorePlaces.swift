import BrokerFileStore
import Foundation

/// How the account store names where a record lies in its errors (``StoreError/corrupt(path:reason:)``).
enum AccountStorePlaces {
    /// Line `line` of the store file `file` under `directory`: how start-up names a record that does not decode, or
    /// the record it opens to prove a key (one per key id) when its secrets do not open.
    static func line(_ line: Int, of file: String, in directory: String) -> String {
        directory + "/" + file + " line \(line)"
    }

    /// Account `id`'s record under `directory`, as a read names it when its sealed secrets do not open.
    static func account(_ id: String, in directory: String) -> String {
        directory + "/" + AccountStoreFormat.snapshotName + " (account \(id))"
    }
}
