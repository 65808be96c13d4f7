import BrokerCore
import Glibc

/// Reads whole small files of one directory by name, reusing one buffer: the start-up path over many record files.
///
/// `openat` on the open directory resolves one name component instead of the
/// whole path, `O_NOATIME` spares every inode an update, and reading until end
/// of file needs no `fstat`, so a record costs open, two reads and close. Not
/// thread-safe: one reader per thread.
struct RecordFileReader {
    /// The directory the names are in, for error messages.
    let directory: String
    /// The open directory; borrowed, not owned.
    private let directoryDescriptor: Int32
    /// Reused for every file; grows to the largest file read.
    private var buffer: [UInt8]

    /// A reader of names in `directory`, open as `descriptor` (the caller closes it).
    init(directory: String, descriptor: Int32) {
        self.directory = directory
        self.directoryDescriptor = descriptor
        self.buffer = [UInt8](repeating: 0, count: 16 * 1024)
    }

    /// `O_NOATIME` (Linux; not in the Glibc module map): reading does not update the file's access time.
    ///
    /// With `relatime`, the first read of a file written since it was last read
    /// updates its access time: at start-up that dirtied (and journalled) the
    /// inode of every record written since the previous start (`touch_atime`,
    /// `ext4_dirty_inode` in a profile; figures in docs/performance.md). Only the files' owner (or CAP_FOWNER) may ask;
    /// anyone else gets EPERM, and the reader then opens without it.
    #if os(Linux) && (arch(x86_64) || arch(arm64))
    private static let noAccessTime: Int32 = 0o1000000
    #else
    private static let noAccessTime: Int32 = 0
    #endif

    /// Whether to ask for `O_NOATIME`; false after the first EPERM.
    private var askNoAccessTime = noAccessTime != 0

    /// The whole content of the file `name`, or nil when it does not exist.
    mutating func read(_ name: String) throws(StoreError) -> [UInt8]? {
        var descriptor = openat(directoryDescriptor, name, O_RDONLY | O_CLOEXEC | (askNoAccessTime ? Self.noAccessTime : 0))
        if descriptor < 0, errno == EPERM, askNoAccessTime {
            askNoAccessTime = false
            descriptor = openat(directoryDescriptor, name, O_RDONLY | O_CLOEXEC)
        }
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw .posix("open", directory + "/" + name)
        }
        defer { close(descriptor) }
        var count = 0
        while true {
            if count == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
            let got = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got == 0 { return Array(buffer[..<count]) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .posix("read", directory + "/" + name)
            }
            count += got
        }
    }
}
