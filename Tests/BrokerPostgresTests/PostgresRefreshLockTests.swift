import BrokerCore
import BrokerPostgres
import BrokerTestSupport
import Foundation
import Testing

/// The refresh lock when the server dies while a refresh holds it: the release is retried once the server is back.
@Suite(.scoped) struct PostgresRefreshLockTests {
    @Test func aReleaseTheKilledServerDidNotAnswerIsRetriedSoTheNextAcquireNeedNotWaitTheTTL() async throws {
        // Ten minutes: within the test's minute of waiting only the retried release can free the lock, never the TTL.
        let ttl = 600.0
        let server = try await PostgresServer.scoped()
        let backend = try await PostgresStorageBackend.open(client: try server.client(poolSize: 2))
        defer { backend.stop() }
        let lock = backend.lock
        let other = PostgresRefreshLock(client: try server.client(poolSize: 1))
        let token = try #require(try await lock.acquire(key: "refresh:github:1", ttl: ttl))
        // Held by another replica across the crash, and never released: shows the restarted server kept its locks.
        _ = try #require(try await other.acquire(key: "refresh:github:2", ttl: ttl))

        await server.kill()
        await #expect(throws: StoreError.self) { try await lock.release(key: "refresh:github:1", token: token) }
        #expect(lock.pendingReleases.count == 1)
        try await server.restart()

        // Another replica, which has nothing to flush, finds the lock free once the retry reached the server.
        var next: String?
        let freed = await eventually(interval: 0.05) {
            next = (try? await other.acquire(key: "refresh:github:1", ttl: ttl)) ?? nil
            return next != nil
        }
        #expect(freed, "the lock was not released within a minute of the server's return")
        #expect(next != token)
        #expect(lock.pendingReleases.count == 0)
        #expect(try await lock.acquire(key: "refresh:github:2", ttl: ttl) == nil, "the restart kept the locks")
    }

    @Test func theSameReplicaTakesTheKeyAgainOnceTheServerIsBack() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        try await PostgresSchema.migrate(client)
        let lock = PostgresRefreshLock(client: client)
        defer { lock.pendingReleases.stop() }
        let token = try #require(try await lock.acquire(key: "refresh:a", ttl: 600))

        await server.kill()
        await #expect(throws: StoreError.self) { try await lock.release(key: "refresh:a", token: token) }
        try await server.restart()

        // Its acquire first tries its own pending release (or the background retry did), then takes the key.
        var next: String?
        #expect(
            await eventually(interval: 0.05) {
                next = (try? await lock.acquire(key: "refresh:a", ttl: 600)) ?? nil
                return next != nil
            })
        #expect(next != token)
        #expect(lock.pendingReleases.count == 0)
    }
}
