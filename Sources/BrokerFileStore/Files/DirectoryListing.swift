import BrokerCore
import Glibc

/// Lists a directory's entry names with opendir/readdir, without Foundation's per-entry overhead.
package enum DirectoryListing {
    /// The names in `directory`, without `.` and `..`, in no particular order.
    package static func names(in directory: String) throws(StoreError) -> [String] {
        var names: [String] = []
        try forEachBatch(in: directory, size: .max) { names += $0 }
        return names
    }

    /// Hands the names in `directory` (without `.` and `..`) to `body` in batches of up to `size` while reading on.
    ///
    /// Listing 100,000 entries takes tens of milliseconds, so a caller can start
    /// work on the first batches while the rest are still being read.
    static func forEachBatch(in directory: String, size: Int, _ body: ([String]) -> Void) throws(StoreError) {
        guard let stream = opendir(directory) else { throw .posix("list", directory) }
        defer { closedir(stream) }
        var batch: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            guard name != "." && name != ".." else { continue }
            batch.append(name)
            if batch.count == size {
                body(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { body(batch) }
    }
}
