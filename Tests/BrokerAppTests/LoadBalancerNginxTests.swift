import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

/// deploy/nginx/load-balancer.conf.template (the compose scale profile's load balancer) in a real nginx in front of
/// two real broker processes on one real `redis-server`: the broker's own 5xx answers pass through as they are,
/// never take a replica out of rotation, and a failed callback is never replayed on the other replica.
@Suite(.serialized, .scoped) struct LoadBalancerNginxTests {
    static let clientSecret = "ACME-CLIENT-SECRET-SENTINEL-lb"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
    static let accountPath = "/account?id=acme:4242"

    /// What nginx writes when it takes a replica out of rotation (at `warn`), and when none is left (at `error`).
    static let markedDown = ["upstream server temporarily disabled", "no live upstreams"]

    struct Cluster {
        let provider: FakeOAuth2Provider
        let a: BrokerProcess
        let b: BrokerProcess
        let nginx: NginxServer
        /// nginx's `http` error log, at `warn` so a replica marked down shows.
        let errorLogPath: String
        var port: Int { nginx.ports[0] }
        var browser: Browser { Browser(brokerPort: port, providerPort: provider.port) }
        var errorLog: String { (try? String(contentsOfFile: errorLogPath, encoding: .utf8)) ?? "" }
    }

    /// The template with its variables filled, as the nginx image's entrypoint does; nginx 1.22 has no `resolve`.
    static func configuration(_ values: [String: String]) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var text = try String(contentsOf: root.appendingPathComponent("deploy/nginx/load-balancer.conf.template"), encoding: .utf8)
        for (name, value) in values { text = text.replacingOccurrences(of: "${\(name)}", with: value) }
        #expect(!text.contains("${"), "a variable of the template was left unfilled")
        return text
    }

    static func start(_ configure: @Sendable (inout FakeOAuth2Provider.Behaviour) -> Void = { _ in }) async throws -> Cluster {
        let redis = try await RedisServer.scoped()
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: clientSecret))
        provider.set(configure)
        let root = try TemporaryDirectory.scoped(prefix: "broker-lb")
        let providers = root + "/providers.json"
        try Data("{\"providers\": {\(provider.providerEntry)}}".utf8).write(to: URL(fileURLWithPath: providers))
        let key = "k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
        func environment(_ name: String) -> [String: String] {
            [
                "BROKER_DATA_DIR": root + "/" + name, "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
                "BROKER_PROVIDERS_FILE": providers, "FAKE_ACME_SECRET": clientSecret, "BROKER_API_KEY": BrokerHarness.apiKey,
                "BROKER_SECRET": "shared-cookie-secret-shared-cookie-secret", "BROKER_ENCRYPTION_KEY": key,
                "BROKER_REFRESH_INTERVAL": "0",
            ]
        }
        let a = try await BrokerProcess.start(environment: environment("a"))
        let b = try await BrokerProcess.start(environment: environment("b"))
        let errorLogPath = root + "/nginx-http-error.log"
        let (portA, portB) = (a.port, b.port)
        let nginx = try await NginxServer.scoped { ports in
            "error_log \(errorLogPath) warn;\n"
                + ((try? configuration([
                    "LISTEN": "127.0.0.1:\(ports[0])", "BROKER_A": "127.0.0.1:\(portA)", "BROKER_B": "127.0.0.1:\(portB)",
                    "RESOLVER": "127.0.0.1", "RESOLVE": "",
                ])) ?? "")
        }
        return Cluster(provider: provider, a: a, b: b, nginx: nginx, errorLogPath: errorLogPath)
    }

    @Test func aThousandFailingReadsMixedWithHealthChecksNeverTakeAReplicaOut() async throws {
        // Tokens that are due at once and a provider whose refresh answers 500: every read of the account is the
        // broker's 502 upstream_error once the token has run out.
        let c = try await Self.start {
            $0.accessTokenLifetime = 1
            $0.refreshFailure = .serverError
        }
        #expect(await c.browser.connect(provider: "acme")?.status == 200, "\(c.errorLog)")
        // The token runs out in its own time (a second): wait for the first 502 on each replica, read directly.
        for replica in [c.a, c.b] {
            #expect(
                await eventually(interval: 0.1) {
                    await TestHTTP.send(port: replica.port, target: Self.accountPath, headers: Self.api)?.status == 502
                })
        }
        let port = c.port
        // Ten clients at once, each 100 reads of the account with a /healthz after every tenth.
        let replies = await withTaskGroup(of: [(String, TestHTTP.Reply?)].self) { group in
            for _ in 0..<10 {
                group.addTask {
                    var mine: [(String, TestHTTP.Reply?)] = []
                    for i in 1...100 {
                        mine.append((Self.accountPath, await TestHTTP.send(port: port, target: Self.accountPath, headers: Self.api)))
                        if i % 10 == 0 { mine.append(("/healthz", await TestHTTP.send(port: port, target: "/healthz"))) }
                    }
                    return mine
                }
            }
            var all: [(String, TestHTTP.Reply?)] = []
            for await some in group { all += some }
            return all
        }
        let reads = replies.filter { $0.0 == Self.accountPath }.map(\.1)
        let health = replies.filter { $0.0 == "/healthz" }.map(\.1)
        #expect(reads.count == 1000 && health.count == 100)
        // The broker's JSON answer every time, never nginx's HTML page for a replica it gave up on.
        let brokers502 = reads.filter { $0?.status == 502 && $0?.body.contains("\"error\":\"upstream_error\"") == true }.count
        #expect(brokers502 == 1000, "\(reads.compactMap { $0 }.filter { !$0.body.contains("upstream_error") }.prefix(3).map(\.body))")
        #expect(health.map { $0?.status } == Array(repeating: 200, count: 100), "\(health.compactMap { $0?.status })")
        #expect(health.allSatisfy { $0?.body.contains("\"status\":\"ok\"") == true })
        let log = c.errorLog
        for line in Self.markedDown { #expect(!log.contains(line), "\(log.suffix(2000))") }
        // Round robin carried the reads to both replicas: their access logs hold the 1,000 502s between them (the
        // lines arrive in their own time) and each holds some.
        let line = "\"path\":\"/account\",\"status\":502"
        func served(_ replica: BrokerProcess) -> Int { replica.log.components(separatedBy: line).count - 1 }
        #expect(await eventually { served(c.a) + served(c.b) >= 1000 + 2 }, "\(served(c.a)) \(served(c.b))")
        #expect(served(c.a) > 0 && served(c.b) > 0, "\(served(c.a)) \(served(c.b))")
        #expect(!c.a.log.contains("SENTINEL") && !c.b.log.contains("SENTINEL"))
    }

    @Test func aFailedCallbackShowsTheProvidersErrorNotInvalidState() async throws {
        let c = try await Self.start { $0.exchangeFailure = .serverError }
        // The code exchange fails: the broker's 502 upstream_error, not the other replica's 400 invalid_state.
        let failed = try #require(await c.browser.connect(provider: "acme"))
        #expect(failed.status == 502, "\(failed.body) \(c.errorLog)")
        #expect(failed.body.contains("\"error\":\"upstream_error\""))
        #expect(!failed.body.contains("invalid_state"))
        // The callback reached one replica once: one exchange, none replayed.
        #expect(c.provider.tokenCalls == 1)

        // The user refuses at the provider: the broker's 403 access_denied.
        c.provider.set {
            $0.exchangeFailure = nil
            $0.deny = true
        }
        let denied = try #require(await c.browser.connect(provider: "acme"))
        #expect(denied.status == 403, "\(denied.body)")
        #expect(denied.body.contains("\"error\":\"access_denied\""))
        #expect(c.provider.tokenCalls == 1)

        // And a sign-in that works, through the same nginx, afterwards.
        c.provider.set { $0.deny = false }
        #expect(await c.browser.connect(provider: "acme")?.status == 200)
        let log = c.errorLog
        for line in Self.markedDown { #expect(!log.contains(line), "\(log.suffix(2000))") }
    }

    /// deploy/haproxy/haproxy.cfg is a configuration HAProxy accepts (its replica names need not resolve here).
    @Test func theHAProxyExampleIsValid() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let haproxy = try TestTools.path("haproxy", package: "haproxy")
        try await TestTools.run(haproxy, ["-c", "-f", root.appendingPathComponent("deploy/haproxy/haproxy.cfg").path])
    }
}
