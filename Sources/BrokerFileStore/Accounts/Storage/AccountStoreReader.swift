import BrokerCore
import Foundation
import Glibc

/// Reads a data directory's accounts without changing anything: for dry runs and for another store's recovery.
///
/// Unlike start-up it takes no lock, removes no file and cuts no torn line;
/// a torn last line of the newest journal is skipped. A directory still in
/// the former layout (no snapshot or journal, an `accounts/` directory) is read file by file.
package enum AccountStoreReader {
    /// The latest record of every account (as stored: compact JSON in the new layout, the file's bytes in the former), by id.
    ///
    /// `id` reads a record's account id (a codec's, or ``recordID(_:)``); a
    /// record it rejects stops the read, as does a bad line that is not a torn last one.
    package static func records(
        in directory: String,
        id: ([UInt8], String) throws(StoreError) -> String = { bytes, path throws(StoreError) in try recordID(bytes, path: path) }
    ) throws(StoreError) -> [(id: String, bytes: [UInt8], origin: String)] {
        var names: [String] = []
        var status = stat()
        if stat(directory, &status) == 0 { names = try DirectoryListing.names(in: directory) }
        let snapshotPath = directory + "/" + AccountStoreFormat.snapshotName
        let generations = names.compactMap(AccountStoreFormat.journalGeneration).sorted()
        if !names.contains(AccountStoreFormat.snapshotName) && generations.isEmpty {
            return try legacyRecords(directory + "/" + AccountStoreFormat.legacyDirectoryName, id: id)
        }
        var latest: [ExactKey: (bytes: [UInt8], origin: String)] = [:]
        // Records `id` rejects, kept until a later line of the same account replaces them (then they do not matter).
        var rejected: [ExactKey: (order: Int, error: StoreError)] = [:]
        var order = 0
        func take(_ record: [UInt8], _ origin: String) throws(StoreError) {
            order += 1
            do throws(StoreError) {
                let key = ExactKey(try id(record, origin))
                latest[key] = (record, origin)
                rejected[key] = nil
            } catch {
                let key = ExactKey(try recordID(record, path: origin))
                latest[key] = (record, origin)
                rejected[key] = (order, error)
            }
        }
        var first = 1
        if let bytes = try DurableFile.read(snapshotPath) {
            var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
            guard lines.count >= 2, lines.removeLast().isEmpty, let header = AccountStoreFormat.header(lines[0]) else {
                throw .corrupt(path: snapshotPath, reason: "not a complete account snapshot this version reads")
            }
            first = header.journal
            for (number, line) in lines.dropFirst().enumerated() {
                let origin = "\(snapshotPath) line \(number + 2)"
                try take(Array(line), origin)
            }
        }
        let replayed = generations.filter { $0 >= first }
        for generation in replayed {
            let path = directory + "/" + AccountStoreFormat.journalName(generation)
            guard let bytes = try DurableFile.read(path) else { continue }
            var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
            if let last = lines.popLast(), !last.isEmpty, generation != replayed.last {
                throw .corrupt(path: path, reason: "a torn line in a journal that is not the newest")
            }
            for (number, line) in lines.enumerated() {
                let origin = "\(path) line \(number + 1)"
                let change = Array(line).withUnsafeBytes { AccountStoreFormat.change($0) }
                switch change {
                case .put(let range)?:
                    try take(Array(line.dropFirst(range.lowerBound).prefix(range.count)), origin)
                case .delete(let deleted)?:
                    latest[ExactKey(deleted)] = nil
                    rejected[ExactKey(deleted)] = nil
                case nil: throw .corrupt(path: origin, reason: "neither a put nor a delete of an account")
                }
            }
        }
        if let first = rejected.values.min(by: { $0.order < $1.order }) { throw first.error }
        return latest.map { ($0.key.string, $0.value.bytes, $0.value.origin) }.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }

    /// The records of the former layout's `accounts/` directory (none when it does not exist), checked against their file names.
    private static func legacyRecords(
        _ legacy: String, id: ([UInt8], String) throws(StoreError) -> String
    ) throws(StoreError) -> [(id: String, bytes: [UInt8], origin: String)] {
        var status = stat()
        if stat(legacy, &status) != 0 && errno == ENOENT { return [] }
        var records: [(id: String, bytes: [UInt8], origin: String)] = []
        for name in try DirectoryListing.names(in: legacy).filter(StoreFileName.isRecordName).sorted() {
            let path = legacy + "/" + name
            guard let bytes = try DurableFile.read(path) else { continue }
            let recordID = try id(bytes, path)
            guard StoreFileName.isName(name, forAccount: recordID) else {
                throw .corrupt(path: path, reason: "the file name does not match the account id \"\(recordID)\"")
            }
            records.append((recordID, bytes, path))
        }
        return records.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }

    private struct IDOnly: Decodable {
        var id: String
    }

    /// The `id` member of the record `bytes`, without decoding the rest.
    package static func recordID(_ bytes: [UInt8], path: String) throws(StoreError) -> String {
        do {
            return try JSONDecoder().decode(IDOnly.self, from: Data(bytes)).id
        } catch {
            throw .corrupt(path: path, reason: "not an account record with an id")
        }
    }
}
