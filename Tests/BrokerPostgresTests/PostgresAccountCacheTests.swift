import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerPostgres

/// The replica cache on PostgreSQL, kept coherent by `LISTEN`/`NOTIFY`: two replicas on one real database, each
/// with its own client, cache and listening session.
struct PostgresAccountCacheTests {
    static func replica(_ configuration: PostgresConfiguration) throws -> CachingPostgresAccountRepository {
        let repository = CachingPostgresAccountRepository(
            base: PostgresAccountRepository(client: try PostgresClient(configuration: configuration)), capacity: 1000)
        repository.start()
        return repository
    }

    /// B serves a cached account from memory; A changes it; after the NOTIFY, B's cached read returns the change,
    /// and the same for a deletion and a creation B had cached as absent.
    @Test func aWriteOnReplicaAIsSeenByACachedReadOnReplicaB() async throws {
        try await SharedPostgresServer.withDatabase { configuration in
            let setup = try PostgresClient(configuration: configuration)
            try await PostgresSchema.migrate(setup)
            await setup.close()
            let a = try Self.replica(configuration)
            let b = try Self.replica(configuration)
            defer {
                a.stop()
                b.stop()
            }
            #expect(await eventually { a.cache.isEnabled && b.cache.isEnabled })
            let account = Account.make(provider: "weibo", uid: "1", accessToken: "first")
            try await a.put(account)

            #expect(try await b.get(id: account.accountID)?.accessToken.value == "first")
            // The notification of A's write may reach B while its first read is in flight, which then keeps nothing:
            // read until B holds it. From then on B answers from memory, without a round trip.
            #expect(
                await eventually {
                    _ = try? await b.get(id: account.accountID); return b.getNow(id: account.accountID) != nil
                })
            #expect(b.getNow(id: account.accountID)?.accessToken.value == "first")
            let hits = b.cache.counts.hits
            #expect(try await b.get(id: account.accountID)?.accessToken.value == "first")
            #expect(b.cache.counts.hits == hits + 1)

            var changed = account
            changed.accessToken = Secret("second")
            try await a.put(changed)
            // A reads its own write at once; B once the notification arrived, from memory again afterwards.
            #expect(try await a.get(id: account.accountID)?.accessToken.value == "second")
            #expect(await eventually { (try? await b.get(id: account.accountID))??.accessToken.value == "second" })
            #expect(
                await eventually {
                    _ = try? await b.get(id: account.accountID)
                    return b.getNow(id: account.accountID)?.accessToken.value == "second"
                })

            // Known absent on B, then created on A.
            let later = Account.make(provider: "weibo", uid: "2", accessToken: "created")
            #expect(try await b.get(id: later.accountID) == nil)
            _ = try await a.update(id: later.accountID) { _ in later }
            #expect(await eventually { (try? await b.get(id: later.accountID))??.accessToken.value == "created" })

            _ = try await a.delete(id: account.accountID)
            #expect(await eventually { (try? await b.get(id: account.accountID)) == .some(nil) })
        }
    }

    /// Writers notify only while some replica's cache listens: a session that listens under another name (the test's
    /// observer) hears nothing of a write while no cache runs, hears the write once a caching replica is up, and
    /// nothing again once it stopped. Each check is ordered by a marker the test notifies after the write
    /// (notifications arrive in commit order), not by waiting.
    @Test func writersNotifyOnlyWhileACacheListens() async throws {
        try await SharedPostgresServer.withDatabase { configuration in
            let client = try PostgresClient(configuration: configuration)
            try await PostgresSchema.migrate(client)
            let writer = PostgresAccountRepository(client: client)
            let observer = PostgresConnection(
                configuration: configuration, label: "observer", scramKeys: client.pool.scramKeys, metrics: client.pool.metrics,
                tls: client.pool.tls)
            _ = try await observer.run(
                [PostgresQuery("LISTEN \(PostgresAccountRepository.channel)")], deadline: PostgresSocket.deadline(in: 10))
            var markers = 0
            // The payloads the observer hears before a marker notified now.
            func heard() async throws -> [String] {
                markers += 1
                let marker = "marker-\(markers)"
                _ = try await client.query("SELECT pg_notify('\(PostgresAccountRepository.channel)', $1)", [.text(marker)])
                var payloads: [String] = []
                for _ in 0..<30 {
                    for notification in try await observer.notifications(until: PostgresSocket.deadline(in: 1)) {
                        if notification.payload == marker { return payloads }
                        payloads.append(notification.payload)
                    }
                }
                Issue.record("the marker never arrived")
                return payloads
            }
            let first = Account.make(provider: "weibo", uid: "1", accessToken: "first")
            try await writer.put(first)
            #expect(try await heard() == [])

            let cached = try Self.replica(configuration)
            #expect(await eventually { cached.cache.isEnabled })
            let second = Account.make(provider: "weibo", uid: "2", accessToken: "second")
            try await writer.put(second)
            _ = try await writer.delete(id: first.accountID)
            #expect(try await heard() == [second.id, first.id])

            cached.stop()
            let listeners = {
                try? await client.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                    [.text(PostgresAccountRepository.listenerApplicationName)]
                ).rows.first?.int(0)
            }
            #expect(await eventually { await listeners() == 0 })
            _ = try await writer.update(id: second.accountID) { account in
                var changed = account
                changed?.accessToken = Secret("third")
                return changed
            }
            #expect(try await heard() == [])
            await observer.close()
            await client.close()
        }
    }

    /// When B's listening session is lost, B drops every cached account (a write made meanwhile would go unnoticed)
    /// and reads from PostgreSQL until the session is back; then it caches again.
    @Test func aLostListeningSessionDropsTheCacheUntilItIsBack() async throws {
        try await SharedPostgresServer.withDatabase { configuration in
            let admin = try PostgresClient(configuration: configuration)
            try await PostgresSchema.migrate(admin)
            let a = try Self.replica(configuration)
            let b = try Self.replica(configuration)
            defer {
                a.stop()
                b.stop()
            }
            #expect(await eventually { b.cache.isEnabled && b.listenerConnects == 1 })
            let account = Account.make(provider: "weibo", uid: "1", accessToken: "first")
            try await a.put(account)
            #expect(
                await eventually {
                    _ = try? await b.get(id: account.accountID); return b.getNow(id: account.accountID) != nil
                })

            // Every listening session of the database ends (A's and B's), as a failover or a restart would end them.
            _ = try await admin.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'")
            #expect(await eventually { b.listenerConnects >= 2 && b.cache.isEnabled })
            // Whatever happened while it was down, nothing of before is served from memory.
            #expect(b.getNow(id: account.accountID) == nil)
            var changed = account
            changed.accessToken = Secret("second")
            try await a.put(changed)
            #expect(await eventually { (try? await b.get(id: account.accountID))??.accessToken.value == "second" })
            #expect(
                await eventually {
                    _ = try? await b.get(id: account.accountID)
                    return b.getNow(id: account.accountID)?.accessToken.value == "second"
                })
            await admin.close()
        }
    }
}
