import BrokerFakeProviders
import BrokerRedis
import BrokerTestSupport
import Foundation
import Testing

/// A broker process on `BROKER_STORE=rediss://…` against a real redis-server that speaks only TLS and requires a
/// client certificate: no sidecar between them.
@Suite(.scoped) struct RedisTLSBrokerTests {
    static let clientSecret = "WEIBO-CLIENT-SECRET-SENTINEL-rediss"

    @Test func aSignInIsStoredAndReadThroughTLSWithAClientCertificate() async throws {
        try await RedisServer.withTLS(password: "SENTINEL-redis-pw") { redis, tls async throws in
            let weibo = try FakeOAuth2Provider.scoped(.weibo(clientSecret: Self.clientSecret))
            let root = try TemporaryDirectory.scoped(prefix: "broker-rediss")
            let providers = root + "/providers.json"
            try Data("{\"providers\": {\(weibo.providerEntry)}}".utf8).write(to: URL(fileURLWithPath: providers))
            let client = try #require(tls.client.clientCertificate)
            let broker = try await BrokerProcess.start(
                environment: [
                    "BROKER_DATA_DIR": root + "/data", "BROKER_STORE": "rediss://:SENTINEL-redis-pw@localhost:\(redis.port)/0",
                    "BROKER_REDIS_TLS_CA_FILE": tls.authority.caFile, "BROKER_REDIS_TLS_CERT_FILE": client.certificateFile,
                    "BROKER_REDIS_TLS_KEY_FILE": client.keyFile, "BROKER_PROVIDERS_FILE": providers,
                    "FAKE_WEIBO_SECRET": Self.clientSecret, "BROKER_API_KEY": BrokerHarness.apiKey,
                    "BROKER_ENCRYPTION_KEY": "k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString(),
                    "BROKER_UPSTREAM_TIMEOUT": "120",
                ])
            #expect(await TestHTTP.send(port: broker.port, target: "/readyz")?.status == 200)
            let browser = Browser(brokerPort: broker.port, providerPort: weibo.port)
            let start = try #require(await browser.authorize("provider=weibo"))
            let location = try #require(start.header("Location"))
            let callback = try #require(await browser.visitProvider(location))
            #expect(await browser.get(callback)?.status == 200)
            let read = await TestHTTP.send(
                port: broker.port, target: "/account?id=weibo:3733034601", headers: [("Authorization", "Bearer " + BrokerHarness.apiKey)])
            #expect(read?.status == 200)
            #expect(read?.body.contains("WEIBO-TOKEN-SENTINEL") == true)
            // The record is in this TLS-only server, sealed.
            let direct = RedisClient(url: redis.tlsURL(settings: tls.client, password: "SENTINEL-redis-pw"), poolSize: 1, timeout: 30)
            let stored = try await direct.command("GET", "tb:account:weibo:3733034601")
            #expect(stored != .bulk(nil) && !"\(stored)".contains("WEIBO-TOKEN-SENTINEL"))
            #expect(!broker.log.contains("SENTINEL-redis-pw"))
        }
    }
}
