import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The API proxy in real broker processes: two replicas on one real `redis-server`, and the memory a process spends
/// streaming large bodies through.
@Suite(.serialized, .scoped) struct ProxyProcessTests {
    static let clientSecret = "ACME-CLIENT-SECRET-SENTINEL-proxy"
    static let headers = [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Broker-Account", "acme:4242")]

    /// A providers file whose `acme` has its API on `provider`, written under `root`.
    static func providersFile(_ provider: FakeOAuth2Provider, root: String) throws -> String {
        let entry = provider.providerEntry(extra: #""api_base_url": "\#(provider.apiBaseURL)", "api_allow_private": true"#)
        let path = root + "/providers.json"
        try Data("{\"providers\": {\(entry)}}".utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func twentyCallsOverTwoReplicasAfterARevocationRefreshOnceAndAllSucceed() async throws {
        let redis = try await RedisServer.scoped()
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: Self.clientSecret))
        // Slow enough that refused calls at both replicas arrive while the first refresh is under way.
        provider.set { $0.refreshDelay = 0.5 }
        let root = try TemporaryDirectory.scoped(prefix: "broker-proxy-replicas")
        let providers = try Self.providersFile(provider, root: root)
        let key = "k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
        func environment(_ name: String) -> [String: String] {
            [
                "BROKER_DATA_DIR": root + "/" + name, "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
                "BROKER_PROVIDERS_FILE": providers, "FAKE_ACME_SECRET": Self.clientSecret, "BROKER_API_KEY": BrokerHarness.apiKey,
                "BROKER_SECRET": "shared-cookie-secret-shared-cookie-secret", "BROKER_ENCRYPTION_KEY": key,
                "BROKER_REFRESH_INTERVAL": "0", "BROKER_UPSTREAM_TIMEOUT": "120",
            ]
        }
        let a = try await BrokerProcess.start(environment: environment("a"))
        let b = try await BrokerProcess.start(environment: environment("b"))
        let connected = await Browser(brokerPort: a.port, providerPort: provider.port).connect(provider: "acme")
        #expect(connected?.status == 200)
        let token = try #require(provider.accessTokens.last)
        provider.revokeAccessToken(token)
        let ports = [a.port, b.port]
        let statuses = await withTaskGroup(of: Int?.self) { group in
            for i in 0..<20 {
                group.addTask {
                    await TestHTTP.send(
                        port: ports[i % 2], method: "POST", target: "/proxy/echo/\(i)", headers: Self.headers, body: "call \(i)")?
                        .status
                }
            }
            return await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(statuses.count == 20 && statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(provider.refreshCalls == 1)
        #expect(provider.ledger.apiRefusals >= 1)
        #expect(!a.log.contains(token) && !b.log.contains(token))
    }

    @Test func fiftyMebibytesEachWayCostTheBrokerLessThanEightMebibytes() async throws {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: Self.clientSecret))
        let root = try TemporaryDirectory.scoped(prefix: "broker-proxy-memory")
        let broker = try await BrokerProcess.start(environment: [
            "BROKER_DATA_DIR": root + "/data", "BROKER_PROVIDERS_FILE": try Self.providersFile(provider, root: root),
            "FAKE_ACME_SECRET": Self.clientSecret, "BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_REFRESH_INTERVAL": "0",
            "BROKER_ACCESS_LOG": "off",
        ])
        #expect(await Browser(brokerPort: broker.port, providerPort: provider.port).connect(provider: "acme")?.status == 200)
        let auth = "Authorization: Bearer \(BrokerHarness.apiKey)\r\nBroker-Account: acme:4242\r\n"
        let size = 50 << 20
        // One call each way first, so that what the first call loads (code, pools, buffers) is in the baseline.
        func upload(_ bytes: Int) async throws -> String? {
            let client = try RawClient(port: broker.port)
            client.send("PUT /proxy/echo/big HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: \(bytes)\r\n\r\n")
            let block = [UInt8](repeating: 0x5A, count: 1 << 20)
            await offPool {
                var left = bytes
                while left > 0 {
                    client.send(Array(block.prefix(left)))
                    left -= min(left, block.count)
                }
            }
            return await client.readResponse()?.text
        }
        func download(_ bytes: Int) async throws -> Int {
            let client = try RawClient(port: broker.port)
            client.send("GET /proxy/bytes?n=\(bytes) HTTP/1.1\r\nHost: x\r\n\(auth)Connection: close\r\n\r\n")
            return await offPool { client.drainCounting() }
        }
        #expect(try await upload(4 << 20)?.contains(#""bytes":\#(4 << 20)"#) == true)
        #expect(try await download(4 << 20) > 4 << 20)
        let baseline = Self.memory(broker.pid, "VmRSS:")
        Self.resetPeak(broker.pid)
        #expect(try await upload(size)?.contains(#""bytes":\#(size)"#) == true)
        #expect(try await download(size) > size)
        let peak = Self.memory(broker.pid, "VmHWM:")
        #expect(baseline > 0 && peak > 0)
        #expect(peak - baseline < 8 << 20, "the broker grew from \(baseline >> 10) KiB to a peak of \(peak >> 10) KiB")
    }

    /// A `/proc/PID/status` field in bytes.
    static func memory(_ pid: pid_t, _ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field) })
        else { return 0 }
        return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
    }

    /// Resets the process's peak resident size to its current one (Linux `clear_refs`, 5).
    static func resetPeak(_ pid: pid_t) {
        let fd = open("/proc/\(pid)/clear_refs", O_WRONLY)
        guard fd >= 0 else { return }
        _ = write(fd, "5", 1)
        close(fd)
    }
}
