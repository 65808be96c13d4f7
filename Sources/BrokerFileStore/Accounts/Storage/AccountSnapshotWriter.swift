import BrokerCore
import Glibc

/// Writes a snapshot of the account store: the header, then each account's latest record copied byte for byte, sorted by id.
package enum AccountSnapshotWriter {
    /// What a snapshot write produced.
    package struct Written {
        /// Where each record lies in the new snapshot.
        var locations: RecordLocations
        /// How many records the snapshot holds.
        package var count: Int { locations.count }
        /// The snapshot's size in bytes.
        package var bytes: Int
        /// The new snapshot, open for reading, when asked to keep it open.
        package var file: AccountStoreFile?
    }

    /// How many bytes are gathered before each `write`.
    private static let bufferSize = 1 << 20

    /// Writes the records at `locations` (read from `files`) as a snapshot at `path` whose journals start at `journal`.
    ///
    /// The sequence is create a temporary file (0600) → write → fsync → rename → fsync the directory, so `path`
    /// holds the old snapshot or the new one, never a mix. `number` names the new file in the returned locations.
    static func write(
        _ locations: RecordLocations, from files: [UInt32: AccountStoreFile], to path: String, journal: Int,
        number: UInt32, keepOpen: Bool
    ) throws(StoreError) -> Written {
        let ordered = locations.ordered()
        var records: [(key: ExactKey, location: RecordLocation, file: AccountStoreFile)] = []
        records.reserveCapacity(ordered.count)
        for (key, location) in ordered {
            guard let file = files[location.file] else {
                throw .unavailable("snapshot of \(path): the file holding account \(key.string) is no longer open")
            }
            records.append((key, location, file))
        }
        return try writeRecords(
            records.lazy.map { ($0.key, $0.location.length) }, to: path, journal: journal, number: number, keepOpen: keepOpen
        ) {
            index, buffer throws(StoreError) in
            let record = records[index]
            buffer += try record.file.read(offset: record.location.offset, length: Int(record.location.length))
        }
    }

    /// Writes records given as bytes (sorted by id, UTF-8 byte order) as a snapshot at `path`; see ``write(_:from:to:journal:number:keepOpen:)``.
    package static func write(
        records: [(id: String, bytes: [UInt8])], to path: String, journal: Int, number: UInt32, keepOpen: Bool
    ) throws(StoreError) -> Written {
        try writeRecords(
            records.lazy.map { (ExactKey($0.id), UInt32($0.bytes.count)) }, to: path, journal: journal, number: number, keepOpen: keepOpen
        ) { index, buffer throws(StoreError) in
            buffer += records[index].bytes
        }
    }

    private static func writeRecords(
        _ keys: some Collection<(ExactKey, UInt32)>, to path: String, journal: Int, number: UInt32, keepOpen: Bool,
        append: (Int, inout [UInt8]) throws(StoreError) -> Void
    ) throws(StoreError) -> Written {
        let temporary = DurableFile.temporaryPath(for: path)
        let descriptor = open(temporary, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .posix("create", temporary) }
        var locations = RecordLocations(file: number, capacity: keys.count)
        var offset = 0
        do throws(StoreError) {
            guard fchmod(descriptor, 0o600) == 0 else { throw .posix("chmod", temporary) }
            var buffer = AccountStoreFormat.headerLine(.init(journal: journal, accounts: keys.count))
            buffer.reserveCapacity(bufferSize + (64 << 10))
            for (index, (key, length)) in keys.enumerated() {
                let start = offset + buffer.count
                try append(index, &buffer)
                guard buffer.count == start - offset + Int(length) else {
                    throw .unavailable("snapshot of \(path): the record of account \(key.string) changed length while copied")
                }
                buffer.append(0x0A)
                locations.appendSorted(key, offset: start, length: length)
                if buffer.count >= bufferSize {
                    try DurableFile.writeAll(buffer, to: descriptor, path: temporary)
                    offset += buffer.count
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            try DurableFile.writeAll(buffer, to: descriptor, path: temporary)
            offset += buffer.count
            guard fsync(descriptor) == 0 else { throw .posix("fsync", temporary) }
            guard rename(temporary, path) == 0 else { throw .posix("rename to", path) }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        let reader = open(path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { throw .posix("open", path) }
        let file = AccountStoreFile(path: path, descriptor: reader, number: number)
        try DurableFile.syncDirectory(DurableFile.directory(of: path))
        return Written(locations: locations, bytes: offset, file: keepOpen ? file : nil)
    }
}
