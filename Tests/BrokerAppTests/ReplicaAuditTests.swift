import BrokerFakeProviders
import BrokerRedis
import BrokerTestSupport
import Foundation
import Testing

/// Two real broker processes on one real `redis-server`, both listing two named keys (the rotation window), each
/// writing its own audit file: who read which token on which replica, and no secret in either file.
@Suite(.serialized, .scoped) struct ReplicaAuditTests {
    static let clientSecret = "WEIBO-CLIENT-SECRET-SENTINEL-audit"
    static let old = "OLD-KEY-SENTINEL-0123456789abcdef0123456789"
    static let new = "NEW-KEY-SENTINEL-fedcba9876543210fedcba9876"

    @Test func bothKeysWorkOnBothReplicasAndEachAuditFileNamesTheCaller() async throws {
        let redis = try await RedisServer.scoped(persistent: false)
        let weibo = try FakeOAuth2Provider.scoped(.weibo(clientSecret: Self.clientSecret))
        let root = try TemporaryDirectory.scoped(prefix: "broker-replica-audit")
        let providers = root + "/providers.json"
        try Data("{\"providers\": {\(weibo.providerEntry)}}".utf8).write(to: URL(fileURLWithPath: providers))
        let key = "k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
        func environment(_ name: String) -> [String: String] {
            [
                "BROKER_DATA_DIR": root + "/" + name, "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
                "BROKER_PROVIDERS_FILE": providers, "FAKE_WEIBO_SECRET": Self.clientSecret,
                "BROKER_API_KEYS": "old:\(Self.old),new:\(Self.new)", "BROKER_AUDIT_LOG": root + "/\(name)-audit.jsonl",
                "BROKER_SECRET": "shared-cookie-secret-shared-cookie-secret", "BROKER_ENCRYPTION_KEY": key,
                "BROKER_UPSTREAM_TIMEOUT": "120", "BROKER_LOG_FORMAT": "json",
            ]
        }
        let a = try await BrokerProcess.start(environment: environment("a"))
        let b = try await BrokerProcess.start(environment: environment("b"))
        let browser = Browser(brokerPort: a.port, providerPort: weibo.port)
        #expect(await browser.connect(provider: "weibo")?.status == 200)
        let target = "/account?id=weibo:3733034601"
        for (port, name, key) in [(a.port, "a", Self.old), (a.port, "a", Self.new), (b.port, "b", Self.old), (b.port, "b", Self.new)] {
            let reply = await TestHTTP.send(
                port: port, target: target, headers: [("Authorization", "Bearer " + key), ("X-Request-Id", "\(name)-\(key.prefix(3))")])
            #expect(reply?.status == 200 && reply?.header("X-Request-Id") == "\(name)-\(key.prefix(3))")
        }
        for port in [a.port, b.port] {
            #expect(
                await TestHTTP.send(port: port, target: target, headers: [("Authorization", "Bearer " + Self.old + "0")])?.status == 401)
        }
        a.signal(SIGTERM)
        b.signal(SIGTERM)
        #expect(await a.waitForExit(timeout: 60) == 0)
        #expect(await b.waitForExit(timeout: 60) == 0)

        for name in ["a", "b"] {
            let text = try String(contentsOfFile: root + "/\(name)-audit.jsonl", encoding: .utf8)
            let reads = text.split(separator: "\n").filter { $0.contains("\"event\":\"token_read\"") }
            #expect(reads.count == 2, "\(name): \(text)")
            #expect(reads.contains { $0.contains("\"caller\":\"old\"") && $0.contains("\"request_id\":\"\(name)-OLD\"") })
            #expect(reads.contains { $0.contains("\"caller\":\"new\"") && $0.contains("\"request_id\":\"\(name)-NEW\"") })
            #expect(text.contains("flow_completed") == (name == "a"))
            for sentinel in ["SENTINEL", Self.old, Self.new, Self.clientSecret] + weibo.accessTokens {
                #expect(!text.contains(sentinel), "\(name)-audit.jsonl holds \(sentinel.prefix(12))…")
            }
        }
        for process in [a, b] {
            for sentinel in [Self.old, Self.new] { #expect(!process.log.contains(sentinel)) }
        }
    }
}
