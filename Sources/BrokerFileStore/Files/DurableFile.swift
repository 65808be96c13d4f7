import BrokerCore
import BrokerCrypto
import Glibc

/// Whole-file writes that are atomic and durable: a reader or a crash sees the old bytes or the new, never a mix.
///
/// Foundation's `.atomic` write does not fsync the directory and creates its
/// temporary file 0666 minus umask, so this type makes the system calls itself.
/// Temporary files are named `<target>.tmp.<16 hex digits>` next to the target.
public enum DurableFile {
    /// Replaces the file at `path` with `bytes`, returning only once the new content and its name are on disk.
    ///
    /// The sequence is open(tmp, O_CREAT|O_EXCL, 0600) → write all → fsync → close →
    /// rename → fsync(directory). On a failure before the rename the temporary file
    /// is removed and the old file is untouched. If only the final directory fsync
    /// fails the new content may or may not survive a crash, and the error says so.
    ///
    /// With `sync: false` both fsyncs are skipped: the replacement is still atomic and
    /// survives a crash of the process (the page cache outlives it), not a power loss.
    public static func write(_ bytes: [UInt8], to path: String, sync: Bool = true) throws(StoreError) {
        try write(bytes, to: path, sync: sync, syncDirectory: { () throws(StoreError) in try syncDirectory(directory(of: path)) })
    }

    private static func write(
        _ bytes: [UInt8], to path: String, sync: Bool,
        syncDirectory: () throws(StoreError) -> Void
    ) throws(StoreError) {
        let temporary = temporaryPath(for: path)
        let descriptor = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .posix("create", temporary) }
        do throws(StoreError) {
            // The umask can only clear bits; fchmod makes the mode exactly 0600 whatever it is.
            guard fchmod(descriptor, 0o600) == 0 else { throw .posix("chmod", temporary) }
            try writeAll(bytes, to: descriptor, path: temporary)
            if sync { try retryingEINTR("fsync", temporary) { fsync(descriptor) } }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        guard close(descriptor) == 0 else {
            let code = errno
            unlink(temporary)
            throw .posix("close", temporary, code)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw .posix("rename to", path, code)
        }
        if sync { try syncDirectory() }
    }

    /// The whole content of the file at `path`, or nil when there is no such file.
    public static func read(_ path: String) throws(StoreError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw .posix("open", path)
        }
        defer { close(descriptor) }
        var status = stat()
        var capacity = 4096
        if fstat(descriptor, &status) == 0, status.st_size > 0 { capacity = Int(status.st_size) + 1 }
        var content: [UInt8] = []
        content.reserveCapacity(capacity)
        var chunk = [UInt8](repeating: 0, count: max(4096, min(capacity, 1 << 20)))
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return content }
            if count < 0 {
                if errno == EINTR { continue }
                throw .posix("read", path)
            }
            content.append(contentsOf: chunk[0..<count])
        }
    }

    /// Removes the file at `path` durably; returns false when it did not exist.
    @discardableResult
    public static func remove(_ path: String) throws(StoreError) -> Bool {
        guard unlink(path) == 0 else {
            if errno == ENOENT { return false }
            throw .posix("remove", path)
        }
        try syncDirectory(directory(of: path))
        return true
    }

    /// Removes every temporary file (`*.tmp.<16 hex>`) in `directory` left by an interrupted write; returns how many.
    ///
    /// Call it at start-up: a temporary file is never the record itself, so a
    /// torn or stale one holds nothing that was acknowledged.
    @discardableResult
    public static func removeStaleTemporaries(in directory: String) -> Int {
        guard let names = try? DirectoryListing.names(in: directory) else { return 0 }
        return removeStaleTemporaries(in: directory, names: names)
    }

    /// Removes the temporary files among `names`, entries of `directory` the caller has listed; returns how many.
    @discardableResult
    static func removeStaleTemporaries(in directory: String, names: [String]) -> Int {
        var removed = 0
        for name in names where hasRandomSuffix(name, marker: temporaryMarker) {
            if unlink(directory + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }

    /// Flushes the directory entry changes (create, rename, unlink) of `directory` to disk.
    package static func syncDirectory(_ directory: String) throws(StoreError) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .posix("open directory", directory) }
        defer { close(descriptor) }
        do throws(StoreError) {
            try retryingEINTR("fsync directory", directory) { fsync(descriptor) }
        } catch {
            throw .unavailable("\(error.message); the write may not survive a crash")
        }
    }

    /// The marker between a target name and the random suffix of its temporary file.
    static let temporaryMarker = ".tmp."

    /// A fresh temporary path next to `path` whose name starts with the target's name.
    static func temporaryPath(for path: String) -> String {
        path + temporaryMarker + randomSuffix()
    }

    /// Sixteen lowercase hex digits from the system's random generator (getrandom on Linux).
    package static func randomSuffix() -> String {
        Hex.encode((0..<8).map { _ in UInt8.random(in: .min ... .max) })
    }

    /// Whether `name` ends in `marker` followed by exactly sixteen lowercase hex digits.
    package static func hasRandomSuffix(_ name: String, marker: String) -> Bool {
        // Most names in a store are records ending in ".json": turn them away before copying anything.
        guard let last = name.utf8.last, (0x30...0x39).contains(last) || (0x61...0x66).contains(last) else { return false }
        let bytes = Array(name.utf8)
        let markerBytes = Array(marker.utf8)
        guard bytes.count > markerBytes.count + 16 else { return false }
        let suffixStart = bytes.count - 16
        guard Array(bytes[(suffixStart - markerBytes.count)..<suffixStart]) == markerBytes else { return false }
        return bytes[suffixStart...].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The directory part of `path`, or `.` for a bare name.
    package static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Writes all of `bytes` to `descriptor`, retrying short writes and EINTR.
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws(StoreError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw .posix("write", path)
            }
            offset += written
        }
    }

    private static func retryingEINTR(_ operation: String, _ path: String, _ call: () -> Int32) throws(StoreError) {
        while call() != 0 {
            if errno == EINTR { continue }
            throw .posix(operation, path)
        }
    }
}
