import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Glibc
import Testing

/// One holder at a time per data directory; the lock file names the holder.
struct DataDirectoryLockTests {
    @Test func aSecondHolderIsRefusedNamingTheFirstUntilItReleases() async throws {
        try await TemporaryDirectory.with { dir in
            let first = try #require(try DataDirectoryLock.acquire(in: dir))
            // flock locks belong to an open file, so a second open in this very process conflicts too.
            do throws(DataDirectoryInUse) {
                _ = try DataDirectoryLock.acquire(in: dir)
                Issue.record("a second holder got the lock")
            } catch {
                #expect(error.holderPID == getpid())
                #expect(error.description.contains("in use by another token-broker (pid \(getpid()))"))
                #expect(error.description.contains("BROKER_STORE"))
            }
            first.release()
            let second = try #require(try DataDirectoryLock.acquire(in: dir))
            second.release()
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: dir + "/broker.lock")[.posixPermissions] as? Int)
            #expect(mode == 0o600)
        }
    }

    @Test func aDirectoryWhereNoLockFileCanBeMadeRunsUnlocked() async throws {
        try await TemporaryDirectory.with { dir in
            // A path under a regular file cannot be created, for root as for anyone.
            #expect(FileManager.default.createFile(atPath: dir + "/file", contents: Data()))
            let lock = try DataDirectoryLock.acquire(in: dir + "/file")
            #expect(lock == nil)
        }
    }
}
