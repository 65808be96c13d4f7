import BrokerCore
import Glibc

/// The one way an append-only journal (flows, the webhook outbox) adds a record to its file.
enum JournalAppend {
    /// Writes `bytes` at the end of the journal open as `descriptor`, in as many `write`s as it takes.
    ///
    /// On a failed or short write the file is cut back to `size`, its last
    /// complete record, so a later append never merges with half a record;
    /// when even that fails, `damaged` is set and the caller rewrites the file
    /// from memory before its next append.
    static func write(_ bytes: [UInt8], to descriptor: Int32, path: String, size: Int, damaged: inout Bool) throws(StoreError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let failure = StoreError.posix("append to", path, written < 0 ? errno : ENOSPC)
                if offset > 0 && ftruncate(descriptor, off_t(size)) != 0 { damaged = true }
                throw failure
            }
            offset += written
        }
    }
}
