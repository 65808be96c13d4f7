import Foundation
import Glibc
import Synchronization
import Testing

@testable import BrokerCore
@testable import BrokerFileStore

/// Start-up's loading lanes on real files: every batch worked on once, and more lanes only when the reads went to the disk.
struct LoadLanesTests {
    /// Writes `count` files of 32 KiB into a new directory beside the package's build (a disk, where
    /// `/tmp` may be memory), runs `body` with the directory and the names, then removes it.
    private func withFiles(_ count: Int, _ body: (String, [String]) throws -> Void) throws {
        var template = Array((FileManager.default.currentDirectoryPath + "/.build/load-lanes-test.XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw StoreTestError("mkdtemp failed: errno \(errno)") }
        let directory = String(cString: created)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let names = (0..<count).map { "record-\($0).json" }
        let content = [UInt8](repeating: UInt8(ascii: "x"), count: 32 * 1024)
        for name in names {
            let fd = open(directory + "/" + name, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            try #require(fd >= 0)
            #expect(write(fd, content, content.count) == content.count)
            #expect(fsync(fd) == 0)
            close(fd)
        }
        try body(directory, names)
    }

    /// How many times the file system read from the disk for this thread (RUSAGE_THREAD).
    private static func blockInputs() -> Int {
        var usage = rusage()
        _ = getrusage(__rusage_who_t(1), &usage)
        return usage.ru_inblock
    }

    /// Drops the files' pages from the page cache (they are written back), so reading them goes to the disk.
    private static func evict(_ directory: String, _ names: [String]) {
        for name in names {
            let fd = open(directory + "/" + name, O_RDONLY)
            _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
            close(fd)
        }
    }

    /// Reads `name` whole; returns its size.
    private static func read(_ path: String) -> Int {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var total = 0
        while true {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n <= 0 { return total }
            total += n
        }
    }

    /// Runs the names through lanes in batches of 8; returns how many lanes ran and what each file read.
    private func load(_ directory: String, _ names: [String]) -> (lanes: Int, sizes: [String: Int]) {
        let sizes = Mutex<[String: Int]>([:])
        let lanes = LoadLanes(initial: 2, maximum: 8) { batch in
            for name in batch {
                let size = Self.read(directory + "/" + name)
                sizes.withLock { $0[name, default: 0] += size }
            }
        }
        for start in stride(from: 0, to: names.count, by: 8) { lanes.add(Array(names[start..<min(start + 8, names.count)])) }
        lanes.finish()
        return (lanes.laneCount, sizes.withLock { $0 })
    }

    @Test func filesInThePageCacheAreReadByOneLanePerCoreEachOnce() throws {
        try withFiles(64) { directory, names in
            for name in names { _ = Self.read(directory + "/" + name) }  // now cached
            let (lanes, sizes) = load(directory, names)
            #expect(lanes == 2)
            #expect(sizes.count == 64 && sizes.values.allSatisfy { $0 == 32 * 1024 })
        }
    }

    @Test func readsThatGoToTheDiskWidenTheLanes() throws {
        try withFiles(64) { directory, names in
            // A memory file system (tmpfs) never reads from a disk, and the test would show nothing.
            Self.evict(directory, [names[0]])
            let before = Self.blockInputs()
            _ = Self.read(directory + "/" + names[0])
            try #require(
                Self.blockInputs() > before, "reads in \(directory) do not go to a disk; run the tests from a disk-backed checkout")
            Self.evict(directory, names)
            let (lanes, sizes) = load(directory, names)
            #expect(lanes == 8)
            #expect(sizes.count == 64 && sizes.values.allSatisfy { $0 == 32 * 1024 })
        }
    }

    @Test func finishingWithNoBatchEndsEveryLane() {
        let lanes = LoadLanes(initial: 3, maximum: 5) { _ in Issue.record("no batch was added") }
        lanes.finish()
        #expect(lanes.laneCount == 3)
    }
}
