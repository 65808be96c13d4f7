import BrokerCore
import Glibc

/// An open snapshot or journal of the account store, read by offset, closed when the last holder lets go.
///
/// A compaction deletes the files it replaced while a reader (a backup, an
/// event's fingerprint) may still be copying records out of them: each
/// reader holds this object, so the descriptor outlives the name.
package final class AccountStoreFile: Sendable {
    /// The file's path when it was opened, for error messages.
    let path: String
    /// The open descriptor, read-only: appends open the journal for each write (see ``AccountStoreLoader/createJournal(_:number:)``).
    let descriptor: Int32
    /// A number naming this file in a ``RecordLocation``, unique within the process.
    let number: UInt32

    /// Wraps `descriptor`, open on `path`, taking over closing it.
    init(path: String, descriptor: Int32, number: UInt32) {
        self.path = path
        self.descriptor = descriptor
        self.number = number
    }

    deinit { close(descriptor) }

    /// The `length` bytes at `offset`; throws when the file is shorter or the read fails.
    func read(offset: Int, length: Int) throws(StoreError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, length - done, off_t(offset + done)) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else {
                throw got < 0 ? .posix("read", path) : .unavailable("read \(path): the file ended before the record at \(offset)")
            }
            done += got
        }
        return bytes
    }
}

/// Where the latest record of an account lies: which file, at which offset, how long (no newline).
package struct RecordLocation: Equatable, Sendable {
    var file: UInt32
    var length: UInt32
    var offset: Int
}
