import BrokerFileStore
import Foundation

/// How the account store names where a record lies in its errors (``StoreError/corrupt(path:reason:)``).
enum AccountStorePlaces {
    /// Line `line` of the store file `file` under `directory`: how start-up names a record that does not decode.
    static func line(_ line: Int, of file: String, in directory: String) -> String {
        directory + "/" + file + " line \(line)"
    }

    /// The record on line `line` of the store file `file` under `directory`, named by the byte it starts at:
    /// how start-up names the record it opens to prove a key (one per key id) when its secrets do not open.
    static func record(onLine line: Int, of file: String, in directory: String) throws -> String {
        let path = directory + "/" + file
        guard let bytes = FileManager.default.contents(atPath: path).map(Array.init) else { throw StoreTestError("cannot read \(path)") }
        var offset = 0
        for _ in 1..<line {
            guard let newline = bytes[offset...].firstIndex(of: 0x0A) else { throw StoreTestError("\(path) has fewer than \(line) lines") }
            offset = newline + 1
        }
        // A journal line is {"put":<record>}; a snapshot line is the record.
        if file != AccountStoreFormat.snapshotName { offset += "{\"put\":".utf8.count }
        return path + " at byte \(offset)"
    }

    /// Account `id`'s record under `directory`, as a read names it when its sealed secrets do not open.
    static func account(_ id: String, in directory: String) -> String {
        directory + "/" + AccountStoreFormat.snapshotName + " (account \(id))"
    }
}
