import BrokerCore
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Device sign-in (RFC 8628) through `POST /device/authorize`, with the real fake provider and a test clock shared by
/// both: the test moves the clock and runs the poller's sweeps itself (`BROKER_DEVICE_POLL_TICK=0`), so no step waits
/// on the wall clock.
@Suite(.scoped) struct DeviceSignInTests {
    static let clientSecret = "ACME-CLIENT-SECRET-device-sign-in"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Content-Type", "application/json")]

    struct Setup {
        let provider: FakeOAuth2Provider
        let brokers: [Broker]
        let clock: TestClock
        /// The harness of a broker on the file store; nil for Redis replicas.
        var harness: BrokerHarness? = nil

        /// Answers a request through the first broker's router in process.
        func respond(_ method: HTTPMethod, _ target: String, headers: [(String, String)], body: String = "") async -> Response {
            await brokers[0].server.router.respond(to: .make(method, target, headers: headers, body: body))
        }

        /// `POST /device/authorize` at the first broker.
        func start(_ body: String = "{\"provider\":\"acme\",\"end_user_id\":\"user-7\",\"tags\":{\"team\":\"a\"}}") async -> (
            status: Int, json: [String: Any]
        ) {
            let reply = await respond(.POST, "/device/authorize", headers: DeviceSignInTests.api, body: body)
            return (reply.status.code, DeviceSignInTests.json(reply))
        }

        /// Moves the shared clock by `seconds`, then runs one sweep at every broker at once; returns the polls made.
        @discardableResult
        func sweep(after seconds: Double) async -> Int {
            clock.advance(seconds)
            return await withTaskGroup(of: Int.self) { group in
                for broker in brokers { group.addTask { await broker.devicePoller.runOnce() } }
                return await group.reduce(0, +)
            }
        }

        /// `GET /flows/{state}` with the API key.
        func outcome(_ state: String) async -> [String: Any] {
            DeviceSignInTests.json(await respond(.GET, "/flows/" + state, headers: DeviceSignInTests.api))
        }
    }

    /// A fake on the test clock and `count` brokers over one store (Redis when `redisPort` is set), their pollers idle.
    static func setUp(
        entry: ((FakeOAuth2Provider) -> String)? = nil, environment: [String: String] = [:], count: Int = 1, redisPort: Int? = nil,
        listen: Bool = false, adjust: (inout FakeOAuth2Provider.Configuration) -> Void = { _ in }
    ) async throws -> Setup {
        let clock = TestClock(Date())
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: clientSecret)
        configuration.now = clock.function
        adjust(&configuration)
        let provider = try FakeOAuth2Provider.scoped(configuration)
        var env = ["FAKE_ACME_SECRET": clientSecret, "BROKER_REFRESH_INTERVAL": "0", "BROKER_DEVICE_POLL_TICK": "0"]
        env.merge(environment) { $1 }
        let providersJSON = "{\"providers\": {\((entry ?? { $0.deviceProviderEntry() })(provider))}}"
        guard let redisPort else {
            let harness = try BrokerHarness(providersJSON: providersJSON, environment: env, now: clock.function, listen: listen)
            return Setup(provider: provider, brokers: [harness.broker], clock: clock, harness: harness)
        }
        // Replicas on one Redis settle their key and secret with each other: built with Broker.make.
        let root = try TemporaryDirectory.scoped(prefix: "broker-device-replicas")
        try Data(providersJSON.utf8).write(to: URL(fileURLWithPath: root + "/providers.json"))
        var brokers: [Broker] = []
        for index in 0..<count {
            var replica = env
            replica["BROKER_PORT"] = "0"
            replica["BROKER_DATA_DIR"] = root + "/data-\(index)"
            replica["BROKER_PROVIDERS_FILE"] = root + "/providers.json"
            replica["BROKER_API_KEY"] = BrokerHarness.apiKey
            replica["BROKER_STORE"] = "redis://127.0.0.1:\(redisPort)/0"
            replica["BROKER_SECRET"] = "shared-cookie-secret-shared-cookie-secret"
            replica["BROKER_ENCRYPTION_KEY"] = "k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
            let logger = BrokerLogger(
                format: .json, writer: LogWriter(fd: open(root + "/broker-\(index).log", O_CREAT | O_WRONLY | O_APPEND, 0o600)))
            let broker = try await Broker.make(
                configuration: try BrokerConfiguration.from(environment: replica), logger: logger, now: clock.function)
            TestScope.required("a broker")?.onEnd { await broker.shutdown() }
            brokers.append(broker)
        }
        return Setup(provider: provider, brokers: brokers, clock: clock)
    }

    static func json(_ response: Response) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    @Test func aDeviceSignInCompletesAfterThreePendingAnswersAndOneSlowDownAndSendsFlowCompleted() async throws {
        let receiver = try WebhookReceiver()
        let s = try await Self.setUp(
            environment: [
                "BROKER_WEBHOOK_URL": receiver.url, "BROKER_WEBHOOK_SECRET": WebhookEndToEndTests.secret,
                "BROKER_WEBHOOK_RETRY_BASE": "0.1", "BROKER_WEBHOOK_RETRY_CAP": "0.4",
            ], listen: true)
        // Three authorization_pending answers; the second poll is told to slow down.
        s.provider.set {
            $0.devicePending = 3
            $0.deviceSlowDownAt = 2
        }
        let started = await s.start()
        #expect(started.status == 200)
        let state = try #require(started.json["state"] as? String)
        #expect(started.json["user_code"] as? String != nil && started.json["interval"] as? Int == 5)
        #expect((started.json["verification_uri"] as? String)?.hasSuffix("/device") == true)
        #expect((started.json["verification_uri_complete"] as? String)?.contains("user_code=") == true)
        #expect(started.json["expires_at"] as? String != nil)
        #expect(started.json["device_code"] == nil)
        #expect(await s.outcome(state)["status"] as? String == "pending")

        #expect(await s.sweep(after: 4) == 0)  // not due before the interval
        #expect(await s.sweep(after: 1) == 1)  // poll 1: authorization_pending
        #expect(await s.sweep(after: 5) == 1)  // poll 2: slow_down, the interval becomes 10 s
        #expect(s.provider.ledger.deviceSlowDowns == 1)
        #expect(await s.sweep(after: 5) == 0)  // 5 s after slow_down: not yet
        #expect(await s.sweep(after: 5) == 1)  // poll 3: authorization_pending
        #expect(await s.sweep(after: 10) == 1)  // poll 4: authorization_pending
        #expect(await s.outcome(state)["status"] as? String == "pending")
        #expect(await s.sweep(after: 10) == 1)  // poll 5: the tokens

        let polls = s.provider.ledger.devicePolls
        #expect(polls.count == 5)
        // RFC 8628 §3.5: after slow_down every poll waits the raised interval (5 + 5 s) by the injected clock.
        #expect(polls[2].timeIntervalSince(polls[1]) >= 10 && polls[3].timeIntervalSince(polls[2]) >= 10)
        #expect(s.provider.ledger.deviceSlowDowns == 1)
        let outcome = await s.outcome(state)
        #expect(outcome["status"] as? String == "completed")
        let accountID = try #require(outcome["account"] as? String)
        #expect(outcome["end_user_id"] as? String == "user-7")
        let account = await s.respond(.GET, "/account?id=" + accountID, headers: Self.api)
        #expect(account.status.code == 200)
        #expect(Self.json(account)["access_token"] as? String == s.provider.ledger.accessTokens.last)
        #expect(await s.sweep(after: 10) == 0)  // the flow is over: nobody polls again
        // Each poll is counted by its answer.
        let metrics = String(decoding: await s.respond(.GET, "/metrics", headers: []).body, as: UTF8.self)
        #expect(metrics.contains("broker_device_polls_total{provider=\"acme\",answer=\"pending\"} 3\n"))
        #expect(metrics.contains("broker_device_polls_total{provider=\"acme\",answer=\"slow_down\"} 1\n"))
        #expect(metrics.contains("broker_device_polls_total{provider=\"acme\",answer=\"tokens\"} 1\n"))

        #expect(await eventually { receiver.accepted.contains { $0.type == "flow.completed" } })
        let completed = try #require(receiver.accepted.first { $0.type == "flow.completed" })
        #expect(completed.data("state") as? String == state && completed.data("account_id") as? String == accountID)
        #expect(completed.data("tags") as? [String: String] == ["team": "a"])
    }

    @Test func accessDeniedEndsTheFlowAsFailed() async throws {
        let s = try await Self.setUp()
        s.provider.set {
            $0.devicePending = 1
            $0.deviceOutcome = .deny
        }
        let started = await s.start("{\"provider\":\"acme\"}")
        let state = try #require(started.json["state"] as? String)
        #expect(await s.sweep(after: 5) == 1)
        #expect(await s.outcome(state)["status"] as? String == "pending")
        #expect(await s.sweep(after: 5) == 1)
        let metrics = String(decoding: await s.respond(.GET, "/metrics", headers: []).body, as: UTF8.self)
        #expect(metrics.contains("broker_device_polls_total{provider=\"acme\",answer=\"failed\"} 1\n"))
        let outcome = await s.outcome(state)
        #expect(outcome["status"] as? String == "failed" && outcome["error"] as? String == "access_denied")
        #expect(await s.sweep(after: 5) == 0)
        #expect(s.provider.ledger.devicePolls.count == 2)
    }

    @Test func pollErrorsAnsweredWithHTTP200AreReadAsGitHubSendsThem() async throws {
        // GitHub answers authorization_pending, slow_down and access_denied with HTTP 200 and an `error` member.
        let s = try await Self.setUp(adjust: { $0.quirks.errorAnswer = { code in (.ok, "{\"error\":\"\(code)\"}") } })
        s.provider.set {
            $0.devicePending = 1
            $0.deviceSlowDownAt = 2
            $0.deviceOutcome = .deny
        }
        let state = try #require(await s.start("{\"provider\":\"acme\"}").json["state"] as? String)
        #expect(await s.sweep(after: 5) == 1)  // authorization_pending
        #expect(await s.sweep(after: 5) == 1)  // slow_down
        #expect(await s.sweep(after: 5) == 0)
        #expect(await s.sweep(after: 5) == 1)  // access_denied
        let outcome = await s.outcome(state)
        #expect(outcome["status"] as? String == "failed" && outcome["error"] as? String == "access_denied")
        #expect(s.provider.ledger.deviceSlowDowns == 1 && s.provider.ledger.devicePolls.count == 3)
    }

    @Test func expiredTokenEndsTheFlowAsFailedToo() async throws {
        let s = try await Self.setUp()
        s.provider.set {
            $0.devicePending = 0
            $0.deviceOutcome = .expire
        }
        let state = try #require(await s.start("{\"provider\":\"acme\"}").json["state"] as? String)
        #expect(await s.sweep(after: 5) == 1)
        let outcome = await s.outcome(state)
        #expect(outcome["status"] as? String == "failed" && outcome["error"] as? String == "expired")
    }

    @Test(arguments: [
        (#"{"device_code":"d-123456789","verification_uri":"https://example.com/device","expires_in":900}"#, "user_code"),
        (
            #"{"device_code":"d-123456789","user_code":"AB-CD","verification_uri":"https://example.com/device","expires_in":900,"interval":100000}"#,
            "interval"
        ),
        (#"{"device_code":"d-123456789","user_code":"AB-CD","verification_uri":"https://example.com/device"}"#, "expires_in"),
        (#"{"user_code":"AB-CD","verification_uri":"https://example.com/device","expires_in":900}"#, "device_code"),
    ])
    func aBadDeviceAnswerIsRefusedWithA502NamingTheField(_ answer: String, _ field: String) async throws {
        let s = try await Self.setUp()
        s.provider.set { $0.deviceAnswer = answer }
        let started = await s.start("{\"provider\":\"acme\"}")
        #expect(started.status == 502)
        #expect(started.json["error"] as? String == "upstream_error")
        #expect((started.json["message"] as? String)?.contains(field) == true)
    }

    @Test func anHTTPVerificationURIIsRefusedUnlessTheProviderEntryAllowsIt() async throws {
        let s = try await Self.setUp(entry: { fake in
            fake.providerEntry(extra: "\"device_authorization_url\": \"\(fake.baseURL)/device/code\"")
        })
        let started = await s.start("{\"provider\":\"acme\"}")
        #expect(started.status == 502)
        #expect((started.json["message"] as? String)?.contains("verification_uri is not https") == true)
    }

    @Test func theBodyIsStrictAndAProviderWithoutDeviceSignInIsRefused() async throws {
        let s = try await Self.setUp(entry: { $0.providerEntry() })
        #expect(await s.start("{\"provider\":\"acme\",\"return_to\":\"https://app.example.com\"}").status == 400)
        let refused = await s.start("{\"provider\":\"acme\"}")
        #expect(refused.status == 400 && (refused.json["message"] as? String)?.contains("device") == true)
        let noKey = await s.respond(
            .POST, "/device/authorize", headers: [("Content-Type", "application/json")], body: "{\"provider\":\"acme\"}")
        #expect(noKey.status.code == 401)
    }

    @Test func twoBrokersOnOneRedisPollOneDeviceFlowOncePerInterval() async throws {
        let redis = try await RedisServer.scoped()
        let s = try await Self.setUp(count: 2, redisPort: redis.port)
        s.provider.set { $0.devicePending = 4 }
        let state = try #require(await s.start("{\"provider\":\"acme\"}").json["state"] as? String)
        for poll in 1...4 {
            // Both replicas sweep at once, several times per interval: the fake still sees one poll per interval.
            #expect(await s.sweep(after: 5) == 1)
            #expect(await s.sweep(after: 0) == 0)
            #expect(s.provider.ledger.devicePolls.count == poll)
        }
        #expect(await s.sweep(after: 5) == 1)
        #expect(s.provider.ledger.deviceSlowDowns == 0 && s.provider.ledger.devicePolls.count == 5)
        #expect(await s.outcome(state)["status"] as? String == "completed")
    }

    @Test func aRestartedBrokerResumesPollingAPendingDeviceFlow() async throws {
        let s = try await Self.setUp()
        s.provider.set { $0.devicePending = 1 }
        let state = try #require(await s.start("{\"provider\":\"acme\"}").json["state"] as? String)
        #expect(await s.sweep(after: 5) == 1)
        let first = try #require(s.harness)
        await first.stop()
        let restarted = try BrokerHarness(
            providersJSON: "{\"providers\": {\(s.provider.deviceProviderEntry())}}", environment: first.environment,
            dataDirectory: first.dataDirectory, now: s.clock.function, listen: false)
        s.clock.advance(5)
        #expect(await restarted.broker.devicePoller.runOnce() == 1)
        let outcome = Self.json(await restarted.respond(.GET, "/flows/" + state, headers: Self.api))
        #expect(outcome["status"] as? String == "completed")
    }
}
