import BrokerTestSupport
import Foundation
import Glibc
import Testing

@testable import BrokerCore
@testable import BrokerFileStore

/// Atomic, durable whole-file writes on a real file system.
struct DurableFileTests {
    @Test func writeCreatesA0600FileWithExactlyTheBytes() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory + "/record.json"
            let bytes = Array((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try DurableFile.write(bytes, to: path)
            #expect(FileProbe.bytes(path) == bytes)
            #expect(FileProbe.mode(path) == 0o600)
            #expect(try DurableFile.read(path) == bytes)
            #expect(FileProbe.names(directory) == ["record.json"])
        }
    }

    @Test func rewriteReplacesContentAndResetsAWidenedMode() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory + "/record.json"
            try FileProbe.plant("old content that is longer than the new one", at: path)
            #expect(chmod(path, 0o644) == 0)
            try DurableFile.write(Array("new".utf8), to: path)
            #expect(FileProbe.bytes(path) == Array("new".utf8))
            #expect(FileProbe.mode(path) == 0o600)
        }
    }

    @Test func failedWriteNamesThePathAndLeavesNothingBehind() async throws {
        try await TemporaryDirectory.with { directory in
            // rename(2) onto a non-empty directory fails with EISDIR, even for root.
            let path = directory + "/record.json"
            #expect(mkdir(path, 0o700) == 0)
            try FileProbe.plant("x", at: path + "/inside")
            #expect {
                try DurableFile.write(Array("secret-SENTINEL".utf8), to: path)
            } throws: { error in
                guard case .unavailable(let message) = error as? StoreError else { return false }
                return message.contains(path) && message.contains("directory") && !message.contains("SENTINEL")
            }
            #expect(FileProbe.names(directory) == ["record.json"])
            #expect(FileProbe.names(path) == ["inside"])
        }
    }

    @Test func writeIntoAMissingDirectoryIsUnavailable() async throws {
        try await TemporaryDirectory.with { directory in
            #expect(throws: StoreError.self) { try DurableFile.write([1], to: directory + "/missing/record.json") }
        }
    }

    @Test func readOfAMissingFileIsNil() async throws {
        try await TemporaryDirectory.with { directory in
            #expect(try DurableFile.read(directory + "/absent") == nil)
            try FileProbe.plant("", at: directory + "/empty")
            #expect(try DurableFile.read(directory + "/empty") == [])
        }
    }

    @Test func removeReportsWhetherTheFileExisted() async throws {
        try await TemporaryDirectory.with { directory in
            try DurableFile.write([1, 2, 3], to: directory + "/a")
            #expect(try DurableFile.remove(directory + "/a"))
            #expect(try !DurableFile.remove(directory + "/a"))
            #expect(FileProbe.names(directory).isEmpty)
        }
    }

    @Test func removeStaleTemporariesMatchesOnlyTheExactSuffix() async throws {
        try await TemporaryDirectory.with { directory in
            let stale = ["a.json.tmp.0123456789abcdef", "b.tmp.ffffffffffffffff"]
            let kept = ["a.json", "a.tmp.0123456789abcdef.json", "c.tmp.0123456789ABCDEF", "d.tmp.0123", "e.tmp.0123456789abcdefa"]
            for name in stale + kept { try FileProbe.plant("x", at: directory + "/" + name) }
            #expect(DurableFile.removeStaleTemporaries(in: directory) == 2)
            #expect(FileProbe.names(directory) == kept.sorted())
        }
    }

    @Test func temporaryNamesStartWithTheTargetAndAreRecognised() {
        let first = DurableFile.temporaryPath(for: "/data/accounts/x.json")
        let second = DurableFile.temporaryPath(for: "/data/accounts/x.json")
        #expect(first.hasPrefix("/data/accounts/x.json.tmp."))
        #expect(first != second)
        #expect(DurableFile.hasRandomSuffix(first, marker: DurableFile.temporaryMarker))
    }
}
