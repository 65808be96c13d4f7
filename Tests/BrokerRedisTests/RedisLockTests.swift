import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerRedis

/// The cross-replica lock: one holder, release by the owner only, expiry by TTL.
struct RedisLockTests {
    @Test func oneHolderAtATimeAndOnlyTheOwnerReleases() async throws {
        try await RedisServer.with { server async throws in
            let lock = RedisLock(client: server.client())
            let other = RedisLock(client: server.client())
            let token = try #require(try await lock.acquire(key: "refresh:github:1", ttl: 30))
            #expect(try await other.acquire(key: "refresh:github:1", ttl: 30) == nil)
            #expect(try await other.acquire(key: "refresh:github:2", ttl: 30) != nil)

            #expect(try await other.release(key: "refresh:github:1", token: "not-the-token") == false)
            #expect(try await other.acquire(key: "refresh:github:1", ttl: 30) == nil)
            #expect(try await other.release(key: "refresh:github:1", token: token) == true)
            #expect(try await lock.release(key: "refresh:github:1", token: token) == false)

            let next = try #require(try await other.acquire(key: "refresh:github:1", ttl: 30))
            #expect(next != token)
        }
    }

    @Test func aLockHeldByACrashedOwnerExpires() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let lock = RedisLock(client: client)
            let stale = try #require(try await lock.acquire(key: "refresh:x", ttl: 0.2))
            let remaining = try #require(try await client.command("PTTL", "tb:lock:refresh:x").integer)
            // At most 200 ms left, or already gone (-2) on a slow machine; never -1, which would mean no TTL at all.
            #expect(remaining == -2 || (1...200).contains(remaining), "PTTL \(remaining)")
            var fresh: String?
            _ = try await eventually(interval: 0.05) {
                fresh = try await lock.acquire(key: "refresh:x", ttl: 30)
                return fresh != nil
            }
            let newToken = try #require(fresh, "the lock outlived its 200 ms TTL by a minute")
            // The old owner waking up late cannot release the new owner's lock.
            #expect(try await lock.release(key: "refresh:x", token: stale) == false)
            #expect(try await client.command("GET", "tb:lock:refresh:x").string == newToken)
        }
    }

    /// The lock's TTL in the two tests below: ten minutes, so a lock can only be free again within the tests' minute
    /// of waiting because its release was retried, never because the TTL ran out.
    static let longTTL = 600.0

    @Test func aReleaseRedisDidNotAnswerIsRetriedSoTheNextAcquireNeedNotWaitTheTTL() async throws {
        try await withTestScope { _ in
            // Persistent: the restarted server still holds every lock, as an operator's Redis would.
            let server = try await RedisServer.scoped(persistent: true)
            let lock = RedisLock(client: server.client())
            defer { lock.pendingReleases.stop() }
            let other = RedisLock(client: server.client())
            let token = try #require(try await lock.acquire(key: "refresh:github:1", ttl: Self.longTTL))
            // Held by another replica across the restart, and never released: shows the server kept its locks.
            _ = try #require(try await other.acquire(key: "refresh:github:2", ttl: Self.longTTL))

            await server.kill()
            await #expect(throws: StoreError.self) { try await lock.release(key: "refresh:github:1", token: token) }
            #expect(lock.pendingReleases.count == 1)
            try await server.restart()

            // Another replica, which has nothing to flush, finds the lock free once the retry reached Redis.
            var next: String?
            let freed = await eventually(interval: 0.05) {
                next = (try? await other.acquire(key: "refresh:github:1", ttl: Self.longTTL)) ?? nil
                return next != nil
            }
            #expect(freed, "the lock was not released within a minute of Redis' return")
            #expect(next != token)
            #expect(lock.pendingReleases.count == 0)
            #expect(try await lock.acquire(key: "refresh:github:2", ttl: Self.longTTL) == nil, "the restart kept the locks")
        }
    }

    @Test func aReleaseThatTimedOutButWentThroughDeletesNothingWhenRetried() async throws {
        try await withTestScope { _ in
            let server = try await RedisServer.scoped()
            let lock = RedisLock(client: server.client(poolSize: 1, timeout: 0.5))
            defer { lock.pendingReleases.stop() }
            let other = RedisLock(client: server.client())
            let token = try #require(try await lock.acquire(key: "refresh:x", ttl: Self.longTTL))

            // Stopped, Redis keeps the release unanswered until the client gives up; resumed, it runs it anyway.
            server.pause()
            let release = Task { () async throws(StoreError) -> Bool in try await lock.release(key: "refresh:x", token: token) }
            #expect(await eventually { server.connectionsWithUnreadBytes() >= 1 }, "the release is sent")
            let result = await release.result
            guard case .failure = result else {
                Issue.record("expected the release to time out, got \(result)")
                server.resume()
                return
            }
            #expect(lock.pendingReleases.count == 1)
            server.resume()

            // Another replica takes the lock the late release freed (or the retry did); the retry, with the old
            // token, leaves the new holder's lock alone.
            var next: String?
            #expect(
                await eventually(interval: 0.05) {
                    next = (try? await other.acquire(key: "refresh:x", ttl: Self.longTTL)) ?? nil
                    return next != nil
                })
            #expect(await eventually { lock.pendingReleases.count == 0 })
            let newToken = try #require(next)
            #expect(try await other.client.command("GET", "tb:lock:refresh:x").string == newToken)
        }
    }

    @Test func anAcquireWhoseReplyWasLostDoesNotLeaveTheLockHeldUntilItsTTL() async throws {
        try await withTestScope { _ in
            let server = try await RedisServer.scoped()
            let lock = RedisLock(client: server.client(poolSize: 1, timeout: 0.5))
            defer { lock.pendingReleases.stop() }
            let other = RedisLock(client: server.client())
            #expect(await lock.client.ping())

            // Stopped, Redis keeps the SET unanswered until the client gives up; resumed, it runs it anyway, taking
            // the lock with a token no caller was given.
            server.pause()
            let acquire = Task { () async throws(StoreError) -> String? in try await lock.acquire(key: "refresh:y", ttl: Self.longTTL) }
            #expect(await eventually { server.connectionsWithUnreadBytes() >= 1 }, "the SET is sent")
            let result = await acquire.result
            guard case .failure = result else {
                Issue.record("expected the acquire to time out, got \(result)")
                server.resume()
                return
            }
            #expect(lock.pendingReleases.count == 1)
            server.resume()

            var next: String?
            let freed = await eventually(interval: 0.05) {
                next = (try? await other.acquire(key: "refresh:y", ttl: Self.longTTL)) ?? nil
                return next != nil
            }
            #expect(freed, "the lock the lost SET took was not released within a minute")
            #expect(await eventually { lock.pendingReleases.count == 0 })
        }
    }

    @Test func ofTwentyConcurrentAcquirersAcrossTwoReplicasOneWins() async throws {
        try await RedisServer.with { server async throws in
            let replicas = [RedisLock(client: server.client()), RedisLock(client: server.client())]
            let tokens = try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<20 {
                    let replica = replicas[index % 2]
                    group.addTask { try await replica.acquire(key: "single-flight", ttl: 30) }
                }
                return try await group.reduce(into: [String]()) { if let token = $1 { $0.append(token) } }
            }
            #expect(tokens.count == 1)
        }
    }
}
