#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Starts child processes one at a time, and only while the test process holds few descriptors.
///
/// Foundation's Linux `Process.run()` lists `/proc/self/fd` to close inherited descriptors
/// in the child, and copies each entry's whole 256-byte `d_name` out of glibc's 32 KiB
/// `readdir` buffer. When the listing fills that buffer (about 1,350 open descriptors) the
/// copy of the last entry can run off the end of the allocation: SIGSEGV in a `memcpy`
/// inside `run()`. Live tests running in parallel hold that many for moments at their
/// peaks, so a launch waits until fewer than ``safeDescriptorCount`` are open (at most
/// ``maximumWait`` seconds), and launches never overlap, so no two of them add up.
/// It blocks its thread meanwhile: call it off Swift's cooperative pool (`offPool`).
public enum ProcessLaunch {
    private static let lock = NSLock()
    /// Below this many open descriptors the listing cannot reach the end of the buffer, with room for a burst.
    public static let safeDescriptorCount = 1_200
    /// How long a launch waits for the descriptor count to fall before it goes ahead anyway.
    public static let maximumWait = 20.0

    /// Starts `process` while no other test is starting one and few descriptors are open.
    public static func run(_ process: Process) throws {
        lock.lock()
        defer { lock.unlock() }
        let deadline = Date().addingTimeInterval(maximumWait)
        while openDescriptors() >= safeDescriptorCount && Date() < deadline {
            usleep(20_000)
        }
        try process.run()
    }

    /// How many descriptors this process has open, counted without copying any entry out of the listing.
    static func openDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while readdir(directory) != nil { count += 1 }
        return max(0, count - 3)  // ".", ".." and the listing's own descriptor
    }
}
