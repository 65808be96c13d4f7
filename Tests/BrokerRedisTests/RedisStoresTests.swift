import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerRedis

/// The bundle `BROKER_STORE=redis://…` selects: one client behind the account, flow and lock stores.
struct RedisStoresTests {
    @Test func everyStoreWritesToTheDatabaseAndPrefixOfTheURL() async throws {
        try await RedisServer.with { server async throws in
            let stores = RedisStores(
                url: try RedisURL(parsing: "redis://127.0.0.1:\(server.port)/3"), keyPrefix: "tb-test:", now: { .fixture })
            #expect(await stores.client.ping())
            try await stores.accounts.put(Account.make(uid: "1"))
            try await stores.flows.put(PendingFlow.make(state: "c3RhdGUtc3RvcmVzLXRlc3Q"))
            // Held far longer than any stall of a loaded machine: the release below must find it.
            let token = try #require(try await stores.lock.acquire(key: "refresh:github:1", ttl: 600))

            let database3 = server.client(database: 3)
            let keys = try #require(try await database3.command("KEYS", "*").array?.compactMap(\.string))
            #expect(
                keys.sorted() == [
                    "tb-test:account:github:1", "tb-test:accounts", "tb-test:accounts:github",
                    "tb-test:flow:c3RhdGUtc3RvcmVzLXRlc3Q", "tb-test:lock:refresh:github:1",
                ])
            #expect(try await server.client().command("DBSIZE") == .integer(0))
            #expect(try await stores.lock.release(key: "refresh:github:1", token: token))
        }
    }
}
