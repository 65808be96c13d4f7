import BrokerCore

/// Opening and replaying a journal's file: the steps every append-only journal takes at start.
enum JournalFile {
    /// Creates `directory` and `directory/folder` (mode 0700), removes temporary files of interrupted rewrites there,
    /// and returns the journal's path and its bytes (none when there is no journal yet).
    static func open(_ name: String, in folder: String, of directory: String) throws(StoreError) -> (path: String, bytes: [UInt8]) {
        try DataDirectory.prepare(directory)
        let folderPath = directory + "/" + folder
        try DataDirectory.prepare(folderPath)
        DurableFile.removeStaleTemporaries(in: folderPath)
        let path = folderPath + "/" + name
        return (path, try DurableFile.read(path) ?? [])
    }

    /// Calls `body` with each complete line of `bytes` (without its newline) that is not blank, in order; returns how
    /// many bytes follow the last newline.
    ///
    /// Those bytes are a torn tail: a record whose write a crash cut short, so
    /// it was never acknowledged and is ignored.
    @discardableResult
    static func forEachLine<Failure: Error>(
        in bytes: [UInt8], _ body: (ArraySlice<UInt8>) throws(Failure) -> Void
    ) throws(Failure) -> Int {
        var start = 0
        while let end = bytes[start...].firstIndex(of: 0x0A) {
            let line = bytes[start..<end]
            start = end + 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
            try body(line)
        }
        return bytes.count - start
    }
}
