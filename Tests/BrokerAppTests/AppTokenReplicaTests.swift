import BrokerFakeProviders
import BrokerRedis
import BrokerTestSupport
import Foundation
import Testing

/// App tokens over two real broker processes sharing one real `redis-server`.
@Suite(.serialized, .scoped) struct AppTokenReplicaTests {
    static let clientSecret = "ACME-CLIENT-SECRET-SENTINEL-appreplicas"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    @Test func twoReplicasAskTheProviderOnceAndShareTheSealedToken() async throws {
        let redis = try await RedisServer.scoped()
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: Self.clientSecret)
        configuration.clientCredentials = true
        let provider = try FakeOAuth2Provider.scoped(configuration)
        // Slow enough that requests at both replicas arrive while the first fetch is under way.
        provider.set { $0.clientCredentialsDelay = 0.5 }
        let root = try TemporaryDirectory.scoped(prefix: "broker-app-replicas")
        let providers = root + "/providers.json"
        try Data("{\"providers\": {\(provider.appTokenEntry())}}".utf8).write(to: URL(fileURLWithPath: providers))
        let key = "k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
        func environment(_ name: String) -> [String: String] {
            [
                "BROKER_DATA_DIR": root + "/" + name, "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
                "BROKER_PROVIDERS_FILE": providers, "FAKE_ACME_SECRET": Self.clientSecret, "BROKER_API_KEY": BrokerHarness.apiKey,
                "BROKER_SECRET": "shared-cookie-secret-shared-cookie-secret", "BROKER_ENCRYPTION_KEY": key,
                // Room for a loaded machine: the test counts provider calls, not how fast they are.
                "BROKER_UPSTREAM_TIMEOUT": "120",
            ]
        }
        let a = try await BrokerProcess.start(environment: environment("a"))
        let b = try await BrokerProcess.start(environment: environment("b"))
        let ports = [a.port, b.port]
        let replies = await withTaskGroup(of: TestHTTP.Reply?.self) { group in
            for i in 0..<20 {
                group.addTask { await TestHTTP.send(port: ports[i % 2], target: "/app-token?provider=acme-app", headers: Self.api) }
            }
            var all: [TestHTTP.Reply?] = []
            for await reply in group { all.append(reply) }
            return all
        }
        #expect(replies.allSatisfy { $0?.status == 200 && $0?.body.contains("\"access_token\":\"ACME-ACCESS-SENTINEL-1\"") == true })
        #expect(provider.clientCredentialsCalls == 1)
        // Later reads at either replica come from Redis, where the token is sealed.
        for port in ports {
            let again = await TestHTTP.send(port: port, target: "/app-token?provider=acme-app", headers: Self.api)
            #expect(again?.body.contains("ACME-ACCESS-SENTINEL-1") == true)
        }
        #expect(provider.clientCredentialsCalls == 1)
        let reply = try await redis.client().command("GET", "tb:apptoken:acme-app|")
        let stored = String(decoding: reply.bytes ?? [], as: UTF8.self)
        #expect(stored.contains("\"access_token\":\"sealed:v1:"))
        #expect(!stored.contains("ACME-ACCESS-SENTINEL"))
        // Not an account: nothing is listed.
        let accounts = await TestHTTP.send(port: a.port, target: "/accounts", headers: Self.api)
        #expect(accounts?.body == "{\"accounts\":[],\"next_cursor\":null}")
        a.signal(SIGTERM)
        b.signal(SIGTERM)
        _ = await a.waitForExit(timeout: 60)
        _ = await b.waitForExit(timeout: 60)
    }
}
