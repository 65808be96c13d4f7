import BrokerCore
import BrokerFileStore
import Foundation
import Glibc

/// The account store's files under a data directory, read and rewritten as a test needs (no repository open on it).
public enum AccountStoreFiles {
    /// The latest record of every account under `directory`, by id, as it lies on disk.
    public static func records(in directory: String) throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for record in try AccountStoreReader.records(in: directory) { result[record.id] = record.bytes }
        return result
    }

    /// The account ids stored under `directory`, sorted.
    public static func ids(in directory: String) throws -> [String] {
        try records(in: directory).keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Rewrites the store under `directory` as one snapshot holding each record passed through `edit` (nil drops it).
    public static func rewrite(in directory: String, _ edit: (_ id: String, _ record: [UInt8]) throws -> [UInt8]?) throws {
        var kept: [(id: String, bytes: [UInt8])] = []
        for record in try AccountStoreReader.records(in: directory) {
            if let bytes = try edit(record.id, record.bytes) { kept.append((record.id, bytes)) }
        }
        try install(kept, in: directory)
    }

    /// Makes `records` (id and compact JSON) the whole store under `directory`: one snapshot, no journal.
    public static func install(_ records: [(id: String, bytes: [UInt8])], in directory: String) throws {
        let sorted = records.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
        _ = try AccountSnapshotWriter.write(
            records: sorted, to: directory + "/" + AccountStoreFormat.snapshotName, journal: 1, number: 0, keepOpen: false)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        where name.hasPrefix("accounts.journal.") {
            unlink(directory + "/" + name)
        }
    }

    /// The store's file names under `directory` (snapshot and journals), sorted.
    public static func fileNames(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
            $0.hasPrefix("accounts.") && $0 != SealedStoreMarker.fileName
        }.sorted()
    }
}
