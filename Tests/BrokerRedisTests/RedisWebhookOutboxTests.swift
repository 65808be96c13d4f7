import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerRedis

/// The Redis webhook outbox: the shared outbox suite (a "restart" is a new client on the same server), then replicas and layout.
struct RedisWebhookOutboxTests {
    private func conformance(_ check: (OutboxOpener) async throws -> Void) async throws {
        try await RedisServer.with { server async throws in
            try await check { RedisWebhookOutbox(client: server.client()) }
        }
    }

    @Test func appendClaimComplete() async throws { try await conformance(WebhookOutboxConformance.appendClaimComplete) }
    @Test func expiredLeaseIsTakenOver() async throws { try await conformance(WebhookOutboxConformance.expiredLeaseIsTakenOver) }
    @Test func dropListReplay() async throws { try await conformance(WebhookOutboxConformance.dropListReplay) }
    @Test func concurrentAppendsAndClaims() async throws { try await conformance(WebhookOutboxConformance.concurrentAppendsAndClaims) }
    @Test func fieldsSurviveRestart() async throws { try await conformance(WebhookOutboxConformance.fieldsSurviveRestart) }
    @Test func pagesWalkEachListOnceInOrder() async throws { try await conformance(WebhookOutboxConformance.pagesWalkEachListOnceInOrder) }
    @Test func claimsFollowTheDueOrder() async throws { try await conformance(WebhookOutboxConformance.claimsFollowTheDueOrder) }
    @Test func holdsLetAProbeThroughAndSetTheRestAside() async throws {
        try await conformance(WebhookOutboxConformance.holdsLetAProbeThroughAndSetTheRestAside)
    }

    @Test func replicasClaimEachDeliveryOnceBetweenThem() async throws {
        try await RedisServer.with { server async throws in
            let replicas = (0..<3).map { _ in RedisWebhookOutbox(client: server.client()) }
            for n in 0..<60 {
                try await replicas[n % 3].append([WebhookOutboxConformance.delivery(WebhookOutboxConformance.eventID(n))])
            }
            let claimed = try await withThrowingTaskGroup(of: [String].self) { group in
                for replica in replicas {
                    group.addTask {
                        var ids: [String] = []
                        while true {
                            let leases = try await replica.claim(limit: 4, now: Date.fixture.addingTimeInterval(1), lease: 60)
                            if leases.isEmpty { return ids }
                            ids += leases.map(\.delivery.id)
                        }
                    }
                }
                var all: [String] = []
                for try await ids in group { all += ids }
                return all
            }
            #expect(claimed.count == 60 && Set(claimed).count == 60)
        }
    }

    @Test func keysLiveUnderThePrefixAndLeasesExpire() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let outbox = RedisWebhookOutbox(client: client)
            let item = WebhookOutboxConformance.delivery(WebhookOutboxConformance.eventID(7))
            try await outbox.append([item])
            _ = try await outbox.claim(limit: 1, now: .fixture, lease: 30)
            let keys = try await client.command("KEYS", "*").array?.compactMap(\.string).sorted() ?? []
            #expect(keys == ["tb:webhooks:d:\(item.id)", "tb:webhooks:due", "tb:webhooks:lease:\(item.id)", "tb:webhooks:pending"])
            let ttl = try await client.command("PTTL", "tb:webhooks:lease:\(item.id)").integer ?? 0
            // The lease expires by itself, at most the 30 s asked for after the claim (however slow this machine is).
            #expect(ttl > 0 && ttl <= 30_000)
        }
    }
}
