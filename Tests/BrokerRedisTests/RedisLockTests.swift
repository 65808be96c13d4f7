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
