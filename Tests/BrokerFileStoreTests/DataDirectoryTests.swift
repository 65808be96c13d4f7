import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// The data directory: private modes, a real writability probe, and secrets created once.
struct DataDirectoryTests {
    @Test func prepareCreatesNestedDirectoriesAndTightensAnExistingOne() async throws {
        try await TemporaryDirectory.with { directory in
            let nested = directory + "/a/b/c"
            try DataDirectory.prepare(nested)
            #expect(FileProbe.mode(nested) == 0o700)
            #expect(FileProbe.mode(directory + "/a") == 0o700)
            #expect(chmod(nested, 0o755) == 0)
            try DataDirectory.prepare(nested)
            #expect(FileProbe.mode(nested) == 0o700)
        }
    }

    @Test func prepareRefusesAPathThatIsAFile() async throws {
        try await TemporaryDirectory.with { directory in
            try FileProbe.plant("x", at: directory + "/file")
            #expect(throws: StoreError.self) { try DataDirectory.prepare(directory + "/file") }
            #expect(throws: StoreError.self) { try DataDirectory.prepare(directory + "/file/below") }
            #expect(throws: StoreError.unavailable("data directory must not be \"/\"")) { try DataDirectory.prepare("//") }
            #expect(throws: StoreError.self) { try DataDirectory.prepare("") }
        }
    }

    @Test func isWritableProbesForRealAndLeavesNothing() async throws {
        try await TemporaryDirectory.with { directory in
            #expect(DataDirectory.isWritable(directory))
            #expect(FileProbe.names(directory).isEmpty)
            #expect(!DataDirectory.isWritable(directory + "/missing"))
            try FileProbe.plant("x", at: directory + "/file")
            #expect(!DataDirectory.isWritable(directory + "/file"))
        }
    }

    @Test func secretIsCreatedOnceWith0600AndReadBackLater() async throws {
        try await TemporaryDirectory.with { directory in
            let calls = Mutex(0)
            let generate = { () -> [UInt8] in
                calls.withLock { $0 += 1 }
                return (0..<32).map { _ in UInt8.random(in: 0...255) }
            }
            let first = try DataDirectory.readOrCreateSecret(named: "master.key", in: directory, generate: generate)
            let second = try DataDirectory.readOrCreateSecret(named: "master.key", in: directory, generate: generate)
            #expect(first.count == 32)
            #expect(second == first)
            #expect(calls.withLock { $0 } == 1)
            #expect(FileProbe.mode(directory + "/master.key") == 0o600)
            #expect(FileProbe.names(directory) == ["master.key"])
        }
    }

    @Test func aTemporaryLeftByAKilledFirstStartIsRemovedOnceItIsAMinuteOld() async throws {
        try await TemporaryDirectory.with { directory in
            let abandoned = directory + "/broker-secret.tmp.00112233445566ff"
            let fresh = directory + "/broker-secret.tmp.aabbccddeeff0011"
            let other = directory + "/accounts.tmp.00112233445566ff"
            for path in [abandoned, fresh, other] { #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8))) }
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: abandoned)
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: other)
            _ = try DataDirectory.readOrCreateSecret(named: "broker-secret", in: directory) { Array("s".utf8) }
            // The old copy of this secret goes; a young one (another creator's, maybe) and other files stay.
            #expect(
                FileProbe.names(directory).sorted() == [
                    "accounts.tmp.00112233445566ff", "broker-secret", "broker-secret.tmp.aabbccddeeff0011",
                ])
        }
    }

    @Test func concurrentCreatorsAllGetTheSameSecret() async throws {
        try await TemporaryDirectory.with { directory in
            let results = Mutex<[[UInt8]]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { index in
                let secret = try? DataDirectory.readOrCreateSecret(named: "key", in: directory) {
                    Array("secret-from-\(index)-".utf8) + (0..<16).map { _ in UInt8.random(in: 0...255) }
                }
                results.withLock { $0.append(secret ?? []) }
            }
            let all = results.withLock { $0 }
            #expect(all.count == 8)
            #expect(Set(all).count == 1)
            #expect(all.first?.isEmpty == false)
            #expect(FileProbe.bytes(directory + "/key") == all.first)
            #expect(FileProbe.names(directory) == ["key"])
        }
    }

    @Test func existingSecretReadableByOthersIsMadePrivate() async throws {
        try await TemporaryDirectory.with { directory in
            try FileProbe.plant("kept", at: directory + "/key")
            #expect(chmod(directory + "/key", 0o644) == 0)
            let secret = try DataDirectory.readOrCreateSecret(named: "key", in: directory) {
                Issue.record("generated"); return [1]
            }
            #expect(secret == Array("kept".utf8))
            #expect(FileProbe.mode(directory + "/key") == 0o600)
        }
    }

    @Test func emptySecretFileIsCorruptAndNotReplaced() async throws {
        try await TemporaryDirectory.with { directory in
            try FileProbe.plant("", at: directory + "/key")
            #expect(throws: StoreError.corrupt(path: directory + "/key", reason: "the secret file is empty")) {
                _ = try DataDirectory.readOrCreateSecret(named: "key", in: directory) { [1, 2, 3] }
            }
            #expect(FileProbe.bytes(directory + "/key") == [])
        }
    }
}
