import BrokerCore
import BrokerPostgres
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

/// An account change and its webhook event on PostgreSQL are one transaction: both or neither.
struct PostgresAccountOutboxTests {
    /// A sink on the back end's outbox whose deliveries are given by the test.
    final class Sink: EventSink {
        let outbox: any WebhookOutbox
        let url: String
        let appendedCount = Mutex(0)
        init(outbox: any WebhookOutbox, url: String) {
            self.outbox = outbox
            self.url = url
        }
        func record(_ type: BrokerEventType, _ data: BrokerEventData) async throws(StoreError) {
            try await outbox.append(deliveries(type, data))
        }
        var changeOutbox: (any WebhookOutbox)? { outbox }
        func deliveries(_ type: BrokerEventType, _ data: BrokerEventData) -> [WebhookDelivery] {
            [
                WebhookDelivery(
                    id: "evt-1.0", eventID: "evt-1", eventType: type.rawValue, accountID: data.accountID, url: url, body: "{}",
                    enqueuedAt: .fixture)
            ]
        }
        func appended() { appendedCount.withLock { $0 += 1 } }
    }

    private static func connected(_ before: Account?, _ after: Account?) -> (BrokerEventType, BrokerEventData)? {
        guard before == nil, let after else { return nil }
        return (.accountConnected, BrokerEventData(account: after))
    }

    @Test func theChangeAndItsEventCommitTogetherOrNotAtAll() async throws {
        try await SharedPostgresServer.withDatabase { configuration in
            let client = try PostgresClient(configuration: configuration)
            let storage = try await PostgresStorageBackend.open(client: client, webhooks: true, now: { .fixture })
            let outbox = try #require(storage.outbox)
            // PostgreSQL's text refuses a NUL byte: the outbox row cannot be written, so the account must not be either.
            let failing = Sink(outbox: outbox, url: "http://127.0.0.1:9/\u{0}")
            let account = Account.make(uid: "atomic")
            await #expect(throws: StoreError.self) {
                _ = try await storage.accounts.update(id: account.accountID, reporting: Self.connected, to: failing) { _ in account }
            }
            #expect(try await storage.accounts.get(id: account.accountID) == nil)
            #expect(try await outbox.stats().pending == 0)
            #expect(failing.appendedCount.withLock { $0 } == 0)

            let working = Sink(outbox: outbox, url: "http://127.0.0.1:9/hooks")
            _ = try await storage.accounts.update(id: account.accountID, reporting: Self.connected, to: working) { _ in account }
            #expect(try await storage.accounts.get(id: account.accountID) == account)
            #expect(try await outbox.stats().pending == 1)
            #expect(working.appendedCount.withLock { $0 } == 1)
            await client.close()
        }
    }
}
