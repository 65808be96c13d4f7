import BrokerCore
import BrokerTestSupport
import Foundation
import Glibc
import Testing

@testable import BrokerFileStore

/// The append-only journal the flow store and the webhook outbox share, on a state of its own: writes before memory,
/// failed writes change nothing, compaction by rename, a vanished file rewritten, lines split as a replay needs.
struct JournalLogTests {
    /// The latest line of each name, as a journal of `<name>=<value>` lines keeps it.
    struct NamedLines: JournalState {
        var lines: [String: [UInt8]] = [:]
        var liveBytes = 0

        /// The lines sorted by name, so a rewrite is exact.
        func liveLines() -> [UInt8] {
            lines.keys.sorted().flatMap { lines[$0] ?? [] }
        }

        mutating func set(_ name: String, _ line: [UInt8]) {
            liveBytes += line.count - (lines.updateValue(line, forKey: name)?.count ?? 0)
        }
    }

    /// The line `<name>=<value>\n`.
    static func line(_ name: String, _ value: Int) -> [UInt8] {
        Array("\(name)=\(value)\n".utf8)
    }

    /// Appends `name=value` and records it in memory once written.
    static func set(_ name: String, _ value: Int, in journal: Journal<NamedLines>) throws(StoreError) {
        let line = line(name, value)
        try journal.changeDurably { (log: inout JournalLog<NamedLines>) throws(StoreError) in
            try log.append(line) { $0.set(name, line) }
        }
    }

    static func contents(_ path: String) throws -> String {
        String(decoding: try #require(try DurableFile.read(path)), as: UTF8.self)
    }

    /// The inode number of the file at `path`, or of the open file `descriptor`.
    static func inode(_ path: String? = nil, descriptor: Int32 = -1) -> ino_t {
        var status = stat()
        let found = path.map { stat($0, &status) } ?? fstat(descriptor, &status)
        return found == 0 ? status.st_ino : 0
    }

    @Test(arguments: [true, false]) func aChangeIsOneLineAppendedAndThenInMemory(durable: Bool) async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory + "/journal.jsonl"
            let journal = try Journal(path: path, state: NamedLines(), durable: durable, compactionThreshold: 1 << 20)
            #expect(try Self.contents(path) == "")
            #expect(FileProbe.mode(path) == 0o600)
            try Self.set("a", 1, in: journal)
            try Self.set("b", 2, in: journal)
            try Self.set("a", 3, in: journal)
            #expect(try Self.contents(path) == "a=1\nb=2\na=3\n")
            #expect(journal.read { $0.lines["a"] } == Self.line("a", 3))
            #expect(journal.read { $0.liveBytes } == 8)
        }
    }

    @Test func aFailedWriteLeavesMemoryAsTheFileIs() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory + "/journal.jsonl"
            let journal = try Journal(path: path, state: NamedLines(), durable: false, compactionThreshold: 1 << 20)
            try Self.set("a", 1, in: journal)
            // Every write to the journal's name now fails with ENOSPC, as on a full disk.
            #expect(rename(path, path + ".aside") == 0 && symlink("/dev/full", path) == 0)
            #expect(throws: StoreError.self) { try Self.set("a", 2, in: journal) }
            #expect(throws: StoreError.self) { try Self.set("b", 1, in: journal) }
            #expect(journal.read { $0.lines } == ["a": Self.line("a", 1)])
            #expect(unlink(path) == 0 && rename(path + ".aside", path) == 0)
            try Self.set("b", 1, in: journal)
            #expect(try Self.contents(path) == "a=1\nb=1\n")
        }
    }

    @Test func aJournalOfMostlyDeadLinesIsRewrittenByRename() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory + "/journal.jsonl"
            let journal = try Journal(path: path, state: NamedLines(), durable: true, compactionThreshold: 64)
            try Self.set("keep", 0, in: journal)
            // Held open, the first file keeps its inode number: no later file can be given it.
            let first = open(path, O_RDONLY | O_CLOEXEC)
            #expect(first >= 0)
            defer { close(first) }
            for value in 1...40 { try Self.set("a", value, in: journal) }
            // Each rewrite is a new file renamed over the journal, holding only the live lines.
            #expect(Self.inode(path) != Self.inode(descriptor: first))
            // Never past the threshold by more than the line that crossed it.
            #expect(try Self.contents(path).utf8.count < 64 + 5)
            try journal.change { (log: inout JournalLog<NamedLines>) throws(StoreError) in try log.compact() }
            #expect(try Self.contents(path) == "a=40\nkeep=0\n")
            #expect(FileProbe.names(directory) == ["journal.jsonl"])
        }
    }

    @Test func aJournalRemovedByHandIsRewrittenFromMemoryBeforeTheNextAppend() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory + "/journal.jsonl"
            let journal = try Journal(path: path, state: NamedLines(), durable: false, compactionThreshold: 1 << 20)
            try Self.set("a", 1, in: journal)
            #expect(unlink(path) == 0)
            try Self.set("b", 2, in: journal)
            #expect(try Self.contents(path) == "a=1\nb=2\n")
        }
    }

    @Test func linesAreSplitBlankLinesSkippedAndATornTailCounted() {
        var lines: [String] = []
        let torn = JournalFile.forEachLine(in: Array("a=1\n\n \r\t\nb=2\nc=".utf8)) { lines.append(String(decoding: $0, as: UTF8.self)) }
        #expect(lines == ["a=1", "b=2"])
        #expect(torn == 2)
        #expect(JournalFile.forEachLine(in: []) { _ in Issue.record("no line in an empty journal") } == 0)
    }

    @Test func openingCreatesPrivateFoldersAndRemovesStaleTemporaries() async throws {
        try await TemporaryDirectory.with { directory in
            let data = directory + "/data"
            let first = try JournalFile.open("journal.jsonl", in: "things", of: data)
            #expect(first.path == data + "/things/journal.jsonl" && first.bytes.isEmpty)
            #expect(FileProbe.mode(data) == 0o700 && FileProbe.mode(data + "/things") == 0o700)
            try DurableFile.write(Array("a=1\n".utf8), to: first.path, sync: false)
            FileManager.default.createFile(atPath: first.path + ".tmp.0123456789abcdef", contents: Data("a=".utf8))
            let second = try JournalFile.open("journal.jsonl", in: "things", of: data)
            #expect(second.bytes == Array("a=1\n".utf8))
            #expect(FileProbe.names(data + "/things") == ["journal.jsonl"])
        }
    }
}
