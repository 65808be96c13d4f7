import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Glibc
import Testing

/// Webhooks from two real broker processes sharing one real `redis-server`: each event delivered by one replica at a
/// time, and a replica killed with SIGKILL in the middle of a delivery loses nothing.
@Suite(.serialized, .scoped) struct WebhookReplicaTests {
    static let clientSecret = "WEIBO-CLIENT-SECRET-SENTINEL-webhooks"

    struct World {
        let redis: RedisServer
        let weibo: FakeOAuth2Provider
        let receiver: WebhookReceiver
        let root: String
        let providers: String

        func environment(_ name: String) -> [String: String] {
            [
                "BROKER_DATA_DIR": root + "/" + name, "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
                "BROKER_PROVIDERS_FILE": providers, "FAKE_WEIBO_SECRET": Self.clientSecret, "BROKER_API_KEY": BrokerHarness.apiKey,
                "BROKER_SECRET": "shared-cookie-secret-shared-cookie-secret",
                "BROKER_ENCRYPTION_KEY": "k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString(),
                "BROKER_WEBHOOK_URL": receiver.url, "BROKER_WEBHOOK_SECRET": WebhookEndToEndTests.secret,
                // Generous, so a replica never gives up on an answer a loaded machine is slow to bring (and sends
                // it again); the lease, 10 s longer, is what another replica waits out after a SIGKILL.
                "BROKER_WEBHOOK_TIMEOUT": "30", "BROKER_WEBHOOK_RETRY_BASE": "0.2", "BROKER_WEBHOOK_RETRY_CAP": "1",
            ]
        }

        static let clientSecret = WebhookReplicaTests.clientSecret

        func stop() async {
            await receiver.stop()
            await redis.stop()
            try? FileManager.default.removeItem(atPath: root)
        }
    }

    static func world() async throws -> World {
        let redis = try await RedisServer.start(persistent: true)
        let weibo = try FakeOAuth2Provider.scoped(.weibo(clientSecret: clientSecret))
        let root = NSTemporaryDirectory() + "broker-webhook-replicas-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let providers = root + "/providers.json"
        try Data("{\"providers\": {\(weibo.providerEntry)}}".utf8).write(to: URL(fileURLWithPath: providers))
        return World(redis: redis, weibo: weibo, receiver: try WebhookReceiver(), root: root, providers: providers)
    }

    @Test func aReplicaKilledMidDeliveryLeavesTheEventToAnotherAndTwoReplicasShareTheWork() async throws {
        let w = try await Self.world()
        // Replica A takes the first event and is killed while the receiver holds the request (it never answers it).
        w.receiver.script([.gated(200)])
        let a = try await BrokerProcess.start(environment: w.environment("a"))
        #expect(await Browser(brokerPort: a.port, providerPort: w.weibo.port).connect(provider: "weibo")?.status == 200)
        #expect(await eventually { w.receiver.received.count == 1 })
        let first = try #require(w.receiver.received.first?.eventID)
        a.signal(SIGKILL)
        _ = await a.waitForExit(timeout: 60)
        // Replica B finds the delivery leased by a dead replica and sends it once the lease (40 s) runs out.
        let b = try await BrokerProcess.start(environment: w.environment("b"))
        #expect(await eventually(timeout: 180) { w.receiver.accepted.contains { $0.eventID == first } })
        #expect(w.receiver.accepted.allSatisfy(WebhookEndToEndTests.isSigned))

        // With both running, sign-ins on either replica are each delivered, once.
        let a2 = try await BrokerProcess.start(environment: w.environment("a"))
        for n in 0..<6 {
            w.weibo.set { $0.users = .fixed("10\(n)") }
            let port = n % 2 == 0 ? a2.port : b.port
            #expect(await Browser(brokerPort: port, providerPort: w.weibo.port).connect(provider: "weibo")?.status == 200)
        }
        #expect(await eventually { Set(w.receiver.accepted.compactMap(\.eventID)).count == 7 })
        // The receiver counts an answer before the replica records it: wait until the outbox is empty, after which
        // nothing can be sent again, and only then look for a second delivery of any event.
        let redis = w.redis.client()
        #expect(await eventually { (try? await redis.command("ZCARD", "tb:webhooks:pending").integer) == 0 })
        let accepted = w.receiver.accepted
        // Once each: a second copy only after an attempt a replica counted as failed (an answer slower than the
        // 30 s timeout on a machine stalled that long), which it says in its log; never two replicas at a time.
        let log = a2.log + b.log
        #expect(
            accepted.count == 7 || log.contains("webhook delivery failed; will retry") || log.contains("webhook receiver down"),
            "\(accepted.count) deliveries of 7 events, none of them retried")
        #expect(Set(accepted.compactMap(\.eventID)).count == 7)
        #expect(
            Set(accepted.compactMap { $0.data("account_id") as? String }) == Set(["weibo:3733034601"] + (0..<6).map { "weibo:10\($0)" }))
        for process in [a2, b] {
            process.signal(SIGTERM)
            #expect(await process.waitForExit(timeout: 60) == 0)
        }
        w.receiver.release()
        await w.stop()
    }
}
