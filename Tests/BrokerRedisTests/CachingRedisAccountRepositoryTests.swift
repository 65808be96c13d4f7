import BrokerCore
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerRedis

/// The cached Redis repository against a real `redis-server`: the shared suite, then coherence between replicas.
struct CachingRedisAccountRepositoryTests {
    /// Repositories opened by a test, stopped when it ends so no invalidation connection outlives it.
    final class Opened: Sendable {
        let all = Mutex<[CachingRedisAccountRepository]>([])
        func open(_ server: RedisServer, capacity: Int = 1_000) -> CachingRedisAccountRepository {
            let repository = CachingRedisAccountRepository(base: RedisAccountRepository(client: server.client()), capacity: capacity)
            repository.start()
            all.withLock { $0.append(repository) }
            return repository
        }
        func stop() { for repository in all.withLock({ $0 }) { repository.stop() } }
    }

    /// Runs `body` with a fresh server and a tracker of opened repositories, stopping both afterwards.
    static func with(_ body: (RedisServer, Opened) async throws -> Void) async throws {
        try await RedisServer.with { server async throws in
            let opened = Opened()
            defer { opened.stop() }
            try await body(server, opened)
        }
    }

    /// Waits until `condition` holds; returns whether it did (the minute bounds a failing test, not a speed target).
    static func eventually(within seconds: Double = 60, _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await condition() { return true }
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
        return try await condition()
    }

    /// An opened repository whose cache is in use.
    static func tracking(_ server: RedisServer, _ opened: Opened, capacity: Int = 1_000) async throws -> CachingRedisAccountRepository {
        let repository = opened.open(server, capacity: capacity)
        try #require(await eventually { repository.cache.isEnabled })
        return repository
    }

    // MARK: Shared suite

    private func conformance(_ check: (RepositoryOpener) async throws -> Void) async throws {
        try await Self.with { server, opened in
            try await check { opened.open(server) }
        }
    }

    @Test func putGetListDelete() async throws { try await conformance(AccountRepositoryConformance.putGetListDelete) }
    @Test func reauthorizationUpdatesSameRecord() async throws {
        try await conformance(AccountRepositoryConformance.reauthorizationUpdatesSameRecord)
    }
    @Test func listFiltersByProviderSortedByID() async throws {
        try await conformance(AccountRepositoryConformance.listFiltersByProviderSortedByID)
    }
    @Test func concurrentUpdatesAreNotLost() async throws {
        try await conformance(AccountRepositoryConformance.concurrentUpdatesAreNotLost)
    }
    @Test func concurrentPutsSurviveRestart() async throws {
        try await conformance(AccountRepositoryConformance.concurrentPutsSurviveRestart)
    }
    @Test func restartPreservesEveryField() async throws { try await conformance(AccountRepositoryConformance.restartPreservesEveryField) }
    @Test func pageFiltersAndPages() async throws { try await conformance(AccountRepositoryConformance.pageFiltersAndPages) }
    @Test func pagingUnderConcurrentInserts() async throws {
        try await conformance(AccountRepositoryConformance.pagingUnderConcurrentInserts)
    }
    @Test func updateEdgeCases() async throws { try await conformance(AccountRepositoryConformance.updateEdgeCases) }
    @Test func canonicallyEquivalentIDsAreDistinct() async throws {
        try await conformance(AccountRepositoryConformance.canonicallyEquivalentIDsAreDistinct)
    }
    @Test func longestUIDsAreStorable() async throws { try await conformance(AccountRepositoryConformance.longestUIDsAreStorable) }

    // MARK: Coherence

    @Test func anUnchangedAccountIsReadFromMemoryAndAWriteElsewhereReachesIt() async throws {
        try await Self.with { server, opened in
            let a = try await Self.tracking(server, opened)
            let b = try await Self.tracking(server, opened)
            let id = Account.make(uid: "coherent").id
            try await a.put(Account.make(uid: "coherent", scope: "0"))
            #expect(try await b.get(id: id)?.scope == "0")
            let before = server.metricsOf(b)
            for _ in 0..<10 { #expect(b.getNow(id: id)?.scope == "0") }
            #expect(server.metricsOf(b).cacheHits - before.cacheHits == 10)
            for round in 1...200 {
                let sent = Date()
                _ = try await a.update(id: id) { current in
                    var next = current
                    next?.scope = String(round)
                    return next
                }
                // Coherence, not speed (the processes' test times it): the write reaches B's cache.
                let seen = try await Self.eventually { try await b.get(id: id)?.scope == String(round) }
                #expect(seen, "round \(round): still stale \(Date().timeIntervalSince(sent)) s after the write")
                // Read again: from memory now.
                #expect(b.getNow(id: id)?.scope == String(round))
            }
            #expect(server.metricsOf(b).invalidations >= 200)
        }
    }

    @Test func aReplicaReadsItsOwnWriteAtOnce() async throws {
        try await Self.with { server, opened in
            let a = try await Self.tracking(server, opened)
            let id = Account.make(uid: "own").id
            #expect(try await a.get(id: id) == nil)
            #expect(a.getNow(id: id) == nil)
            for round in 0..<50 {
                try await a.put(Account.make(uid: "own", scope: String(round)))
                #expect(try await a.get(id: id)?.scope == String(round))
            }
            #expect(try await a.delete(id: id) != nil)
            #expect(try await a.get(id: id) == nil)
        }
    }

    @Test func readsNeverGoBackInTimeWhileAnotherReplicaWrites() async throws {
        try await Self.with { server, opened in
            let writer = try await Self.tracking(server, opened)
            let reader = try await Self.tracking(server, opened, capacity: 4)
            let id = Account.make(uid: "monotonic").id
            try await writer.put(Account.make(uid: "monotonic", scope: "0"))
            let done = Flag()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for round in 1...400 {
                        _ = try await writer.update(id: id) { current in
                            var next = current
                            next?.scope = String(round)
                            return next
                        }
                    }
                    done.value.store(true, ordering: .relaxed)
                }
                for _ in 0..<3 {
                    group.addTask {
                        var last = 0
                        while !done.value.load(ordering: .relaxed) {
                            let seen = Int(try await reader.get(id: id)?.scope ?? "-1") ?? -1
                            #expect(seen >= last, "read \(seen) after \(last)")
                            last = max(last, seen)
                            // Other keys churn the small LRU meanwhile.
                            _ = try await reader.get(id: "github:other-\(seen % 7)")
                            // A hit never suspends: leave the cooperative threads to the writer now and then.
                            await Task.yield()
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await Self.eventually { try await reader.get(id: id)?.scope == "400" })
        }
    }

    @Test func writesFromAnyClientAndFlushesInvalidate() async throws {
        try await Self.with { server, opened in
            let a = try await Self.tracking(server, opened)
            let account = Account.make(uid: "raw")
            try await a.put(account)
            #expect(try await a.get(id: account.id) == account)
            #expect(a.getNow(id: account.id) == account)
            _ = try await server.client().command("DEL", "tb:account:\(account.id)")
            #expect(try await Self.eventually { a.getNow(id: account.id) == nil })
            #expect(try await a.get(id: account.id) == nil)
            try await a.put(account)
            #expect(try await a.get(id: account.id) == account)
            _ = try await server.client().command("FLUSHALL")
            #expect(try await Self.eventually { a.getNow(id: account.id) == nil })
            #expect(try await a.get(id: account.id) == nil)
        }
    }

    @Test func whileTheInvalidationConnectionIsLostTheCacheIsDroppedAndUnused() async throws {
        try await Self.with { server, opened in
            let a = try await Self.tracking(server, opened)
            let b = try await Self.tracking(server, opened)
            let id = Account.make(uid: "lost").id
            try await a.put(Account.make(uid: "lost", scope: "before"))
            #expect(try await b.get(id: id)?.scope == "before")
            #expect(b.getNow(id: id)?.scope == "before")
            let connectsBefore = server.metricsOf(b).trackingConnects
            // Kill every subscribed connection: both replicas lose their invalidation connection.
            _ = try await server.client().command("CLIENT", "KILL", "TYPE", "pubsub")
            #expect(try await Self.eventually { b.getNow(id: id) == nil })
            // Whatever happens meanwhile is read from Redis, and tracking comes back by itself.
            try await a.put(Account.make(uid: "lost", scope: "meanwhile"))
            #expect(try await b.get(id: id)?.scope == "meanwhile")
            #expect(try await Self.eventually { b.cache.isEnabled })
            #expect(server.metricsOf(b).trackingConnects > connectsBefore)
            #expect(try await b.get(id: id)?.scope == "meanwhile")
            try await a.put(Account.make(uid: "lost", scope: "after"))
            #expect(try await Self.eventually { try await b.get(id: id)?.scope == "after" })
        }
    }

    @Test func aRestartedRedisDropsTheCacheAndTrackingResumes() async throws {
        try await Self.with { server, opened in
            let a = try await Self.tracking(server, opened)
            let account = Account.make(uid: "restart")
            try await a.put(account)
            #expect(try await a.get(id: account.id) == account)
            await server.kill()
            #expect(try await Self.eventually { !a.cache.isEnabled })
            #expect(a.getNow(id: account.id) == nil)
            try await server.restart()
            #expect(try await Self.eventually { a.cache.isEnabled })
            // The restarted server lost the data: the cache must not remember it.
            #expect(try await a.get(id: account.id) == nil)
        }
    }

    @Test func holdsAtMostItsCapacity() async throws {
        try await Self.with { server, opened in
            let a = try await Self.tracking(server, opened, capacity: 3)
            for uid in 0..<10 {
                try await a.put(Account.make(uid: "cap\(uid)"))
                _ = try await a.get(id: "github:cap\(uid)")
            }
            #expect(server.metricsOf(a).cacheEntries == 3)
            #expect(a.getNow(id: "github:cap9") != nil)
            #expect(a.getNow(id: "github:cap0") == nil)
        }
    }
}

/// A flag shared between tasks.
final class Flag: Sendable {
    let value = Atomic<Bool>(false)
}

extension RedisServer {
    /// The counters of `repository`'s client.
    func metricsOf(_ repository: CachingRedisAccountRepository) -> RedisMetrics.Snapshot {
        repository.base.client.metrics.snapshot()
    }
}
