import BrokerCore
import Foundation
import Glibc

/// The account store's files in a data directory, and the lines they hold.
///
/// `accounts.snapshot.jsonl` starts with a header line
/// `{"snapshot":"token-broker accounts","version":1,"journal":G,"accounts":N}`
/// followed by N account records, one compact JSON object a line, sorted by id.
/// `accounts.journal.<G>.jsonl` holds the changes since, one line each:
/// `{"put":<record>}` or `{"delete":"<id>"}`. Start-up reads the snapshot and
/// replays the journals whose generation is G or more, oldest first.
/// Records are the same objects, sealed the same way, as the files of the
/// former one-file-per-account layout (`accounts/<id>.json`).
package enum AccountStoreFormat {
    /// The snapshot's file name in the data directory.
    package static let snapshotName = "accounts.snapshot.jsonl"
    /// The directory of the former layout, one file per account.
    package static let legacyDirectoryName = "accounts"
    /// Where the former layout's directory goes once it has been migrated (kept for a rollback, never read again).
    package static let migratedDirectoryName = "accounts.migrated"
    /// The directory under the data directory that backups (`POST /backup`) and accounts moved aside by a restore go to.
    package static let backupDirectoryName = "backups"

    private static let journalPrefix = "accounts.journal."
    private static let journalSuffix = ".jsonl"

    /// The file name of the journal of `generation`.
    package static func journalName(_ generation: Int) -> String {
        journalPrefix + String(generation) + journalSuffix
    }

    /// The generation of the journal named `name`, or nil when `name` is not a journal's name.
    static func journalGeneration(_ name: String) -> Int? {
        guard name.hasPrefix(journalPrefix), name.hasSuffix(journalSuffix) else { return nil }
        let digits = name.dropFirst(journalPrefix.count).dropLast(journalSuffix.count)
        guard !digits.isEmpty, digits.count <= 18, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), digits.first != "0" else {
            return nil
        }
        return Int(digits)
    }

    /// The offset of the first newline in `bytes[start..<end]`, or nil when there is none.
    ///
    /// memchr reads a word at a time; the generic `firstIndex(of:)` on a slice of raw bytes goes byte by byte.
    static func newline(in bytes: UnsafeRawBufferPointer, from start: Int, before end: Int) -> Int? {
        guard start < end, let base = bytes.baseAddress, let found = memchr(base + start, 0x0A, end - start) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// What a snapshot's first line says.
    struct Header: Equatable {
        /// The first journal generation to replay after the snapshot.
        var journal: Int
        /// How many record lines follow.
        var accounts: Int
    }

    /// The header line of a snapshot, newline included.
    static func headerLine(_ header: Header) -> [UInt8] {
        Array(
            "{\"snapshot\":\"token-broker accounts\",\"version\":1,\"journal\":\(header.journal),\"accounts\":\(header.accounts)}\n".utf8)
    }

    private struct HeaderJSON: Decodable {
        var snapshot: String
        var version: Int
        var journal: Int
        var accounts: Int
    }

    /// The header in `line` (without its newline); nil when it is not one this version reads.
    static func header(_ line: some Collection<UInt8>) -> Header? {
        guard line.count <= 512, let json = try? JSONDecoder().decode(HeaderJSON.self, from: Data(line)),
            json.snapshot == "token-broker accounts", json.version == 1, json.journal >= 1, json.accounts >= 0
        else { return nil }
        return Header(journal: json.journal, accounts: json.accounts)
    }

    /// The bytes a put line has before its record.
    static let putPrefix = Array("{\"put\":".utf8)
    /// The bytes a delete line has before the id's string.
    static let deletePrefix = Array("{\"delete\":".utf8)

    /// A journal line recording `record` (compact JSON), and where the record starts in it.
    static func putLine(_ record: [UInt8]) -> [UInt8] {
        var line = putPrefix
        line.reserveCapacity(record.count + putPrefix.count + 2)
        line += record
        line += [0x7D, 0x0A]
        return line
    }

    /// A journal line recording that account `id` was deleted.
    static func deleteLine(_ id: String) -> [UInt8] {
        deletePrefix + JSONLine.string(id) + [0x7D, 0x0A]
    }

    /// One journal line, read.
    enum Change {
        /// The record's bytes lie at `range` of the line.
        case put(Range<Int>)
        /// Account `id` was deleted.
        case delete(String)
    }

    /// What the journal line `line` (without its newline, indices from 0) records; nil when it is neither a put nor a delete.
    static func change(_ line: UnsafeRawBufferPointer) -> Change? {
        let count = line.count
        guard count >= 2, line[count - 1] == 0x7D else { return nil }
        if count > putPrefix.count + 1, line.starts(with: putPrefix) {
            return .put(putPrefix.count..<(count - 1))
        }
        if count > deletePrefix.count + 1, line.starts(with: deletePrefix) {
            let literal = Data(line[deletePrefix.count..<(count - 1)])
            guard let id = try? JSONSerialization.jsonObject(with: literal, options: .fragmentsAllowed) as? String else { return nil }
            return .delete(id)
        }
        return nil
    }
}
