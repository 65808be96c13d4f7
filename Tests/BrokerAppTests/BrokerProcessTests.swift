import BrokerApp
import BrokerTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The executable as operators run it: start-up, probes, metrics, signals, exit codes.
@Suite(.serialized, .scoped) struct BrokerProcessTests {
    static func tempDir() throws -> String {
        try TemporaryDirectory.scoped(prefix: "broker-test")
    }

    @Test func servesProbesAndMetricsThenStopsCleanlyOnSIGTERM() async throws {
        let dir = try Self.tempDir()
        let broker = try await BrokerProcess.start(environment: ["BROKER_DATA_DIR": dir + "/data"])
        #expect(await TestHTTP.send(port: broker.port, target: "/healthz")?.status == 200)
        #expect(await TestHTTP.send(port: broker.port, target: "/readyz")?.status == 200)
        let metrics = try #require(await TestHTTP.send(port: broker.port, target: "/metrics"))
        #expect(metrics.status == 200)
        #expect(metrics.body.contains("broker_http_requests_total{route=\"/healthz\",status=\"2xx\"} 1"))
        #expect(metrics.body.contains("broker_http_request_duration_seconds_bucket{route=\"/healthz\",le=\"+Inf\"}"))
        #expect(metrics.body.contains("broker_build_info{version=\"\(BrokerVersion.current)\"} 1"))
        let gauge = { (name: String) in
            metrics.body.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
        }
        #expect((gauge("process_resident_memory_bytes") ?? 0) > 1_000_000)
        #expect((gauge("process_open_fds") ?? 0) >= 3)
        #expect(abs((gauge("process_start_time_seconds") ?? 0) - Date().timeIntervalSince1970) < 600)
        // The scrape's own connection is open; earlier ones may still be finishing their close.
        let open = metrics.body.split(separator: "\n").first { $0.hasPrefix("broker_http_open_connections ") }
        #expect(open.flatMap { Int($0.split(separator: " ")[1]) }.map { $0 >= 1 } == true)
        // The data directory is created 0700.
        var info = stat()
        #expect(stat(dir + "/data", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        broker.signal(SIGTERM)
        #expect(await broker.waitForExit(timeout: 60) == 0)
        #expect(broker.log.contains("\"msg\":\"request\""))
        #expect(broker.log.contains("\"path\":\"/healthz\""))
    }

    /// The start-up log is a short summary of what is configured, not a line per preset left unconfigured: its length
    /// does not grow with the catalogue, it names providers and keys (never a key or secret), and a typo still gets its
    /// WARNING.
    @Test func theStartUpLogIsAShortSummaryWithoutSecrets() async throws {
        let dir = try Self.tempDir()
        let secrets = [
            "GITHUB-SECRET-SENTINEL-0123456789", "OPS-KEY-SENTINEL-0123456789abcdef0123456789",
            "CI-KEY-SENTINEL-0123456789abcdef01234567890",
        ]
        let broker = try await BrokerProcess.start(environment: [
            "BROKER_DATA_DIR": dir + "/data", "GITHUB_CLIENT_ID": "Iv1.github-client", "GITHUB_CLIENT_SECRET": secrets[0],
            "BROKER_API_KEYS": "ops:\(secrets[1]),ci:\(secrets[2])", "BROKER_PROT": "8080",
            "BROKER_ENCRYPTION_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
        ])
        #expect(await TestHTTP.send(port: broker.port, target: "/healthz")?.status == 200)
        broker.signal(SIGTERM)
        #expect(await broker.waitForExit(timeout: 60) == 0)
        let lines = broker.log.split(separator: "\n").map(String.init)
        let startUp = Array(lines.prefix { !$0.contains("\"msg\":\"listening\"") })
        let listening = try #require(lines.first { $0.contains("\"msg\":\"listening\"") })
        // Before `listening`: the typo's WARNING, the connection cap, and nothing per provider.
        #expect(startUp.count <= 3, "\(startUp.joined(separator: "\n"))")
        #expect(startUp.contains { $0.contains("unknown variable ignored") && $0.contains("\"did_you_mean\":\"BROKER_PORT\"") })
        #expect(!broker.log.contains("not configured") && !broker.log.contains("gitlab") && !broker.log.contains("slack"))
        // The summary: configured providers, store, API keys by name, where it listens.
        #expect(listening.contains("\"providers\":\"github\"") && listening.contains("\"api_keys\":\"ops,ci\""))
        #expect(listening.contains("\"store\":\"files\"") && listening.contains("\"port\":\(broker.port)"))
        #expect(listening.contains("\"host\":\"127.0.0.1\"") && listening.contains("\"providers_unconfigured\":"))
        for secret in secrets { #expect(!broker.log.contains(secret)) }
    }

    @Test func sigintAlsoStopsIt() async throws {
        let dir = try Self.tempDir()
        let broker = try await BrokerProcess.start(environment: ["BROKER_DATA_DIR": dir])
        broker.signal(SIGINT)
        #expect(await broker.waitForExit(timeout: 60) == 0)
    }

    @Test func readinessIs503WhenTheDataDirectoryCannotBeWritten() async throws {
        let dir = try Self.tempDir()
        let broker = try await BrokerProcess.start(environment: ["BROKER_DATA_DIR": dir])
        #expect(await TestHTTP.send(port: broker.port, target: "/readyz")?.status == 200)
        // Replace the directory by a file: writes fail even for root.
        try FileManager.default.removeItem(atPath: dir)
        #expect(FileManager.default.createFile(atPath: dir, contents: Data("x".utf8)))
        let ready = try #require(await TestHTTP.send(port: broker.port, target: "/readyz"))
        #expect(ready.status == 503)
        #expect(ready.body.contains("storage_not_writable"))
        #expect(await TestHTTP.send(port: broker.port, target: "/healthz")?.status == 200)
    }

    /// Two brokers on one file store would each keep their own memory of it; the second is refused, and so is rekey.
    @Test func aSecondBrokerOnTheSameDataDirectoryIsRefusedUntilTheFirstIsGone() async throws {
        let dir = try Self.tempDir()
        let first = try await BrokerProcess.start(environment: ["BROKER_DATA_DIR": dir])
        let pid = first.pid
        let (status, text) = try await runBroker([], environment: ["BROKER_DATA_DIR": dir, "BROKER_PORT": "0"])
        #expect(status == 1)
        #expect(text.contains("is in use by another token-broker (pid \(pid))"))
        let (rekeyStatus, rekeyText) = try await runBroker(["rekey"], environment: ["BROKER_DATA_DIR": dir])
        #expect(rekeyStatus == 1)
        #expect(rekeyText.contains("stop it before rekeying"))
        #expect(await TestHTTP.send(port: first.port, target: "/readyz")?.status == 200)
        // The kernel drops the lock with the process, even on kill -9: no stale lock to clean up.
        first.signal(SIGKILL)
        #expect(await first.waitForExit(timeout: 60) != nil)
        let second = try await BrokerProcess.start(environment: ["BROKER_DATA_DIR": dir])
        #expect(await TestHTTP.send(port: second.port, target: "/healthz")?.status == 200)
        second.signal(SIGTERM)
        #expect(await second.waitForExit(timeout: 60) == 0)
    }

    @Test func invalidConfigurationExitsWithCode2NamingTheVariable() async throws {
        let (status, text) = try await runBroker([], environment: ["BROKER_PORT": "not-a-port"])
        #expect(status == 2)
        #expect(text.contains("BROKER_PORT"))
    }

    @Test func healthcheckSubcommandReflectsTheServer() async throws {
        let dir = try Self.tempDir()
        let broker = try await BrokerProcess.start(environment: ["BROKER_DATA_DIR": dir])
        #expect(try await runBroker(["healthcheck"], environment: ["BROKER_PORT": String(broker.port)]).0 == 0)
        // It only asks the running broker: a providers file gone since its start does not fail it, as `serve` would fail.
        let gone = ["BROKER_PORT": String(broker.port), "BROKER_PROVIDERS_FILE": dir + "/gone.json"]
        #expect(try await runBroker(["healthcheck"], environment: gone).0 == 0)
        #expect(try await runBroker(["config", "check"], environment: gone).0 == 2)
        broker.signal(SIGTERM)
        _ = await broker.waitForExit(timeout: 60)
        #expect(try await runBroker(["healthcheck"], environment: ["BROKER_PORT": String(broker.port)]).0 == 1)
    }
}
