import BrokerCrypto
import BrokerFakeProviders
import BrokerRedis
import BrokerTestSupport
import Foundation
import Testing

/// Real broker processes on one real `redis-server` settle their encryption key and cookie secret, or refuse to start.
@Suite(.serialized, .scoped) struct ReplicaSettlementTests {
    static let clientSecret = "WEIBO-CLIENT-SECRET-SENTINEL-settlement"
    static let secret = "shared-cookie-secret-shared-cookie-secret"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
    static let accountID = "weibo:3733034601"

    static func key(_ id: String, _ byte: UInt8) -> String {
        "\(id):" + Base64.encode([UInt8](repeating: byte, count: 32))
    }

    /// A Redis, a fake Weibo and a directory for the replicas' data directories and providers file.
    struct Setup {
        let redis: RedisServer
        let weibo: FakeOAuth2Provider
        let root: String

        static func start() async throws -> Setup {
            let redis = try await RedisServer.start()
            let root = NSTemporaryDirectory() + "broker-settlement-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            let weibo = try FakeOAuth2Provider.scoped(.weibo(clientSecret: ReplicaSettlementTests.clientSecret))
            try Data("{\"providers\": {\(weibo.providerEntry)}}".utf8).write(to: URL(fileURLWithPath: root + "/providers.json"))
            return Setup(redis: redis, weibo: weibo, root: root)
        }

        /// The environment of replica `name`; nil leaves the key or secret unset.
        func environment(_ name: String, key: String?, secret: String? = ReplicaSettlementTests.secret) -> [String: String] {
            var environment = [
                "BROKER_DATA_DIR": root + "/" + name, "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
                "BROKER_PROVIDERS_FILE": root + "/providers.json", "FAKE_WEIBO_SECRET": ReplicaSettlementTests.clientSecret,
                "BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_UPSTREAM_TIMEOUT": "120",
            ]
            environment["BROKER_ENCRYPTION_KEY"] = key
            environment["BROKER_SECRET"] = secret
            return environment
        }

        func stop(_ brokers: [BrokerProcess]) async {
            for broker in brokers { broker.signal(SIGTERM) }
            for broker in brokers { _ = await broker.waitForExit(timeout: 60) }
            await redis.stop()
            try? FileManager.default.removeItem(atPath: root)
        }
    }

    /// Starts a replica expected to refuse; returns its exit status and log.
    static func refusal(_ environment: [String: String]) async throws -> (status: Int32, log: String) {
        switch try await BrokerProcess.launch(environment: environment) {
        case .listening(let broker):
            broker.signal(SIGKILL)
            _ = await broker.waitForExit(timeout: 60)
            Issue.record("the replica started although it should have refused")
            return (-1, broker.log)
        case .exited(let status, let log):
            return (status, log)
        }
    }

    @Test func aReplicaWithAnotherKeyOrSecretRefusesToStartNamingTheVariable() async throws {
        let setup = try await Setup.start()
        let a = try await BrokerProcess.start(environment: setup.environment("a", key: Self.key("k1", 1)))
        #expect(await Browser(brokerPort: a.port, providerPort: setup.weibo.port).connect(provider: "weibo")?.status == 200)

        let otherKey = try await Self.refusal(setup.environment("b", key: Self.key("k2", 2)))
        #expect(otherKey.status == 2)
        #expect(
            otherKey.log.contains("BROKER_ENCRYPTION_KEY: differs from the key the other replicas use (key id k1; this replica's is k2)"))
        let sameIDOtherKey = try await Self.refusal(setup.environment("c", key: Self.key("k1", 9)))
        #expect(sameIDOtherKey.status == 2)
        #expect(sameIDOtherKey.log.contains("BROKER_ENCRYPTION_KEY: differs from the key the other replicas use (key id k1)"))
        let otherSecret = try await Self.refusal(
            setup.environment("d", key: Self.key("k1", 1), secret: "another-cookie-secret-another-cookie-secret"))
        #expect(otherSecret.status == 2)
        #expect(otherSecret.log.contains("BROKER_SECRET: differs from the secret the other replicas use"))
        let unsetKey = try await Self.refusal(setup.environment("e", key: nil))
        #expect(unsetKey.status == 2)
        #expect(
            unsetKey.log.contains(
                "BROKER_ENCRYPTION_KEY: is not set, and the other replicas seal records with a key they were given (key id k1)"))
        let unsetSecret = try await Self.refusal(setup.environment("f", key: Self.key("k1", 1), secret: nil))
        #expect(unsetSecret.status == 2)
        #expect(unsetSecret.log.contains("BROKER_SECRET: is not set, and the other replicas sign cookies with a secret they were given"))
        for refused in [otherKey, sameIDOtherKey, otherSecret, unsetKey, unsetSecret] {
            #expect(!refused.log.contains(String(Self.key("k1", 1).dropFirst(3))))
            #expect(!refused.log.contains(Self.secret))
        }
        // Nothing a refused replica did reached Redis: the first one still serves its account.
        #expect(await TestHTTP.send(port: a.port, target: "/account?id=\(Self.accountID)", headers: Self.api)?.status == 200)
        #expect(try await setup.redis.client().command("EXISTS", "tb:generated:encryption-key") == .integer(0))
        await setup.stop([a])
    }

    @Test func twoReplicasStartingTogetherOnAnEmptyRedisCannotBothWin() async throws {
        let setup = try await Setup.start()
        var serving: [BrokerProcess] = []
        for round in 0..<4 {
            _ = try await setup.redis.client().command("FLUSHALL")
            async let first = BrokerProcess.launch(environment: setup.environment("a\(round)", key: Self.key("k1", 1)))
            async let second = BrokerProcess.launch(environment: setup.environment("b\(round)", key: Self.key("k2", 2)))
            let launches = try await [first, second]
            var exits: [Int32] = []
            for launch in launches {
                switch launch {
                case .listening(let broker): serving.append(broker)
                case .exited(let status, _): exits.append(status)
                }
            }
            #expect(exits == [2], "round \(round): one replica serves and the other exits 2")
            for broker in serving { broker.signal(SIGTERM); _ = await broker.waitForExit(timeout: 60) }
            serving = []
        }
        await setup.stop([])
    }

    @Test func replicasGivenNoKeyOrSecretShareOnesGeneratedOnceInRedis() async throws {
        let setup = try await Setup.start()
        async let first = BrokerProcess.start(environment: setup.environment("a", key: nil, secret: nil))
        async let second = BrokerProcess.start(environment: setup.environment("b", key: nil, secret: nil))
        let (a, b) = try await (first, second)
        for broker in [a, b] {
            #expect(
                broker.log.contains(
                    "BROKER_ENCRYPTION_KEY is not set: account secrets are encrypted with a key kept beside the data, in Redis"))
        }
        // Connected through A, read through B with the session cookie A signed and the key A sealed with.
        let onA = Browser(brokerPort: a.port, providerPort: setup.weibo.port)
        #expect(await onA.connect(provider: "weibo")?.status == 200)
        let onB = Browser(brokerPort: b.port, providerPort: setup.weibo.port)
        for (name, value) in onA.jar.cookies { onB.jar.set(name, value) }
        let read = try #require(await onB.get("/account?id=\(Self.accountID)"))
        #expect(read.status == 200)
        #expect(read.body.contains("WEIBO-TOKEN-SENTINEL"))
        // Beside the data, in Redis; nothing in the replicas' own directories.
        #expect(
            try await setup.redis.client().command("EXISTS", "tb:generated:encryption-key", "tb:generated:broker-secret") == .integer(2))
        for name in ["a", "b"] {
            #expect(!FileManager.default.fileExists(atPath: setup.root + "/\(name)/encryption-key"))
            #expect(!FileManager.default.fileExists(atPath: setup.root + "/\(name)/broker-secret"))
        }
        await setup.stop([a, b])
    }

    @Test func aRotationIsAcceptedWhileRecordsUnderTheOldKeyRemain() async throws {
        let setup = try await Setup.start()
        let old = try await BrokerProcess.start(environment: setup.environment("a", key: Self.key("old", 1)))
        #expect(await Browser(brokerPort: old.port, providerPort: setup.weibo.port).connect(provider: "weibo")?.status == 200)
        // The new key first, the old one after it: accepted, and the record sealed with the old key opens.
        let rotated = try await BrokerProcess.start(environment: setup.environment("b", key: Self.key("new", 2) + "," + Self.key("old", 1)))
        #expect(await TestHTTP.send(port: rotated.port, target: "/account?id=\(Self.accountID)", headers: Self.api)?.status == 200)
        // A replica given only the old key would not open what the rotated one seals now.
        let stale = try await Self.refusal(setup.environment("c", key: Self.key("old", 1)))
        #expect(stale.status == 2)
        #expect(stale.log.contains("BROKER_ENCRYPTION_KEY: lacks key id new"))
        // Nor may the old key be dropped while a record is sealed with it; rekey reseals and retires it.
        var rekeyEnvironment = setup.environment("d", key: Self.key("new", 2) + "," + Self.key("old", 1))
        rekeyEnvironment["BROKER_LOG_FORMAT"] = "json"
        let rekey = try await runBroker(["rekey"], environment: rekeyEnvironment)
        #expect(rekey.0 == 0, "\(rekey.1)")
        #expect(rekey.1.contains("\"rewritten\":1"))
        #expect(rekey.1.contains("older keys retired"))
        let stored = try #require(try await setup.redis.client().command("GET", "tb:account:\(Self.accountID)").string).filter {
            !$0.isWhitespace
        }
        #expect(stored.contains("\"kid\":\"new\"") && !stored.contains("\"kid\":\"old\""))
        let newOnly = try await BrokerProcess.start(environment: setup.environment("e", key: Self.key("new", 2)))
        let read = try #require(await TestHTTP.send(port: newOnly.port, target: "/account?id=\(Self.accountID)", headers: Self.api))
        #expect(read.status == 200)
        #expect(read.body.contains("WEIBO-TOKEN-SENTINEL"))
        await setup.stop([old, rotated, newOnly])
    }

    @Test func aKeyAndSecretGeneratedInTheDataDirectoryByAnEarlierVersionAreAdopted() async throws {
        let setup = try await Setup.start()
        let keyBytes = [UInt8](repeating: 5, count: 32)
        try FileManager.default.createDirectory(atPath: setup.root + "/a", withIntermediateDirectories: true)
        try Data((Base64.encode(keyBytes) + "\n").utf8).write(to: URL(fileURLWithPath: setup.root + "/a/encryption-key"))
        try Data("an-earlier-generated-secret-of-32-bytes!".utf8).write(to: URL(fileURLWithPath: setup.root + "/a/broker-secret"))
        let a = try await BrokerProcess.start(environment: setup.environment("a", key: nil, secret: nil))
        #expect(a.log.contains("the encryption key an earlier version generated in the data directory is now shared through Redis"))
        let shared = try #require(try await setup.redis.client().command("GET", "tb:generated:encryption-key").string)
        #expect(shared == Base64.encode(keyBytes))
        #expect(
            try await setup.redis.client().command("GET", "tb:generated:broker-secret").string == "an-earlier-generated-secret-of-32-bytes!"
        )
        // Records an earlier version sealed with that key, given explicitly, are the same key: it agrees.
        let explicit = try await BrokerProcess.start(
            environment: setup.environment(
                "b", key: Base64.encode(keyBytes),
                secret: "an-earlier-generated-secret-of-32-bytes!"))
        await setup.stop([a, explicit])
    }

    @Test func aReplicaStartedWhileRedisIsDownWaitsForItBeforeServing() async throws {
        let setup = try await Setup.start()
        await setup.redis.kill()
        let waiting = TestEvent()
        async let starting = BrokerProcess.start(
            environment: setup.environment("a", key: Self.key("k1", 1)),
            starting: { log in if log.contains("waiting for Redis") { waiting.signal() } })
        // Redis comes back only once the broker has said it waits for it.
        #expect(await waiting.wait(), "the broker never said it waits for Redis")
        try await setup.redis.restart()
        let broker = try await starting
        #expect(broker.log.contains("waiting for Redis"))
        #expect(await TestHTTP.send(port: broker.port, target: "/readyz")?.status == 200)
        #expect(try await setup.redis.client().command("HEXISTS", "tb:replicas:fingerprints", "key:k1") == .integer(1))
        await setup.stop([broker])
    }
}
