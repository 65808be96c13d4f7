import Glibc

/// Lists a directory's entry names with opendir/readdir, without Foundation's per-entry overhead.
enum DirectoryListing {
    /// The names in `directory`, without `.` and `..`, in no particular order.
    static func names(in directory: String) throws(StoreError) -> [String] {
        guard let stream = opendir(directory) else { throw .posix("list", directory) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
