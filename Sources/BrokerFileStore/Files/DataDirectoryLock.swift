import BrokerCore
import Glibc
import Synchronization

/// An exclusive `flock` on `<data directory>/broker.lock`, so one process at a time runs on a file store.
///
/// Two brokers on one data directory would each keep their own view of the
/// accounts and pending flows in memory, and append to one flow journal: what
/// one stores, the other never sees, until a restart. Replicas share state
/// through Redis instead (`BROKER_STORE`). The kernel drops the lock when the
/// process ends, however it ends (`kill -9` included), so a crash never leaves
/// a stale lock behind; the file itself stays, holding the last owner's pid.
public final class DataDirectoryLock: Sendable {
    /// The lock file's name inside the data directory.
    public static let fileName = "broker.lock"

    /// The open lock file, or -1 once released.
    private let descriptor: Mutex<Int32>

    private init(descriptor: Int32) {
        self.descriptor = Mutex(descriptor)
    }

    /// Takes the lock of `directory`; throws ``DataDirectoryInUse`` when another process (or another holder in this one) has it.
    ///
    /// Returns nil when the lock file cannot be opened at all (a read-only or
    /// full file system): the broker then runs unlocked, since it cannot write
    /// its store there either, and readiness reports that.
    public static func acquire(in directory: String) throws(DataDirectoryInUse) -> DataDirectoryLock? {
        let path = directory + "/" + fileName
        // Held open read-only (flock does not need more): a descriptor open for writing would
        // stop the file system from being remounted read-only under the running broker.
        let fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        // A lock this very process holds is one being released: a child that this process forks
        // keeps the descriptor (and so the lock) from fork until exec, a moment in which an earlier
        // broker of this process may have let go. That is waited out, for two seconds at most.
        var patience = 200
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            let holder = Self.holder(fd)
            if holder == getpid(), patience > 0 {
                patience -= 1
                usleep(10_000)
                continue
            }
            close(fd)
            throw DataDirectoryInUse(directory: directory, holderPID: holder)
        }
        // The owner's pid, for the message another broker gets; on a read-only file system the old one stays.
        let writer = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        if writer >= 0 {
            let pid = Array("\(getpid())\n".utf8)
            _ = pid.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            close(writer)
        }
        return DataDirectoryLock(descriptor: fd)
    }

    /// Gives the lock up (closing the file drops it); later calls do nothing.
    public func release() {
        let fd = descriptor.withLock { fd -> Int32 in
            defer { fd = -1 }
            return fd
        }
        if fd >= 0 { close(fd) }
    }

    deinit { release() }

    /// The pid written in the lock file by its owner, if it reads as one.
    private static func holder(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        // Written by `acquire` as digits and a newline.
        return Int32(String(decoding: buffer[..<n].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }, as: UTF8.self))
    }
}

/// Another process holds the data directory's lock.
public struct DataDirectoryInUse: Error, CustomStringConvertible {
    /// The data directory.
    public let directory: String
    /// The pid its owner wrote, when there is one.
    public let holderPID: Int32?

    public var description: String {
        "the data directory \(directory) is in use by another token-broker"
            + (holderPID.map { " (pid \($0))" } ?? "")
            + ": one broker runs on a file store at a time; replicas share their state through Redis (BROKER_STORE=redis://…)"
    }
}
