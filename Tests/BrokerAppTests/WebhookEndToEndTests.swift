import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

#if canImport(Glibc)
import Glibc
#endif

/// Webhooks end to end: an in-process broker on real sockets, an OAuth 2.0 provider and a real receiver that records
/// what it gets and can fail, stall or be down.
@Suite(.scoped) struct WebhookEndToEndTests {
    static let secret = "whsec-test-0123456789abcdef0123456789abcdef"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    struct Setup {
        let provider: FakeOAuth2Provider
        let receiver: WebhookReceiver
        let broker: BrokerHarness
        let clock: TestClock
        var browser: Browser { Browser(brokerPort: broker.port, providerPort: provider.port) }

        /// A sign-in as the provider's user `id`; the callback's status.
        func connect(user id: Int = 4242) async -> Int? {
            provider.set { $0.userBody = "{\"id\":\(id),\"login\":\"user\(id)\"}" }
            return await browser.connect(provider: "acme")?.status
        }

        func get(_ target: String) async -> TestHTTP.Reply? {
            await TestHTTP.send(port: broker.port, target: target, headers: WebhookEndToEndTests.api)
        }

        func metric(_ series: String) async -> Int? {
            guard let text = await TestHTTP.send(port: broker.port, target: "/metrics")?.body else { return nil }
            return RefreshEndToEndTests.metric(text, series)
        }

        func stop() async {
            await broker.stop()
            await receiver.stop()
        }
    }

    static func environment(_ receiver: WebhookReceiver, _ extra: [String: String] = [:]) -> [String: String] {
        var env = [
            "FAKE_ACME_SECRET": RefreshEndToEndTests.clientSecret, "BROKER_REFRESH_INTERVAL": "0",
            "BROKER_WEBHOOK_URL": receiver.url, "BROKER_WEBHOOK_SECRET": secret, "BROKER_WEBHOOK_TIMEOUT": "30",
            "BROKER_WEBHOOK_RETRY_BASE": "0.1", "BROKER_WEBHOOK_RETRY_CAP": "0.4",
        ]
        env.merge(extra) { $1 }
        return env
    }

    static func setUp(_ extra: [String: String] = [:], dataDirectory: String? = nil) async throws -> Setup {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: RefreshEndToEndTests.clientSecret))
        let receiver = try WebhookReceiver()
        let clock = TestClock(Date())
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry)}}",
            environment: environment(receiver, extra), dataDirectory: dataDirectory, now: { clock.now })
        return Setup(provider: provider, receiver: receiver, broker: broker, clock: clock)
    }

    /// Whether `received` is signed with the test secret, with a fresh timestamp, and its event id header matches the body.
    static func isSigned(_ received: WebhookReceiver.Received) -> Bool {
        guard let signature = received.signature, let id = received.id else { return false }
        return WebhookSignature.verify(header: signature, secret: Array(secret.utf8), body: received.body, now: Date())
            && received.eventID == id && received.contentType == "application/json"
    }

    @Test func everyEventTypeFiresOncePerChangeWithAValidSignature() async throws {
        let s = try await Self.setUp()
        #expect(await s.connect() == 200)
        #expect(await s.connect() == 200)
        // The user refuses at the provider: the flow was found, so it is reported.
        let browser = s.browser
        let start = try #require(await browser.authorize("provider=acme"))
        let state = try #require(URLComponents(string: start.header("Location") ?? "")?.queryItems?.first { $0.name == "state" }?.value)
        #expect(await browser.get("/callback?error=access_denied&state=\(state)")?.status == 403)
        // A refresh fails with 5 s left and the next try 30 s away (the cooldown), then the refresh token is refused.
        s.provider.set { $0.refreshFailure = .serverError }
        s.clock.advance(3595)
        #expect(await s.get("/account?id=acme:4242")?.status == 200)
        s.provider.set { $0.refreshFailure = .invalidGrant }
        s.clock.advance(31)
        #expect(await s.get("/account?id=acme:4242")?.status == 410)
        #expect(await s.get("/account?id=acme:4242")?.status == 410)
        s.provider.set { $0.refreshFailure = nil }
        #expect(await s.connect() == 200)
        let deleted = await TestHTTP.send(port: s.broker.port, method: "DELETE", target: "/account?id=acme:4242", headers: Self.api)
        #expect(deleted?.status == 204)

        #expect(await eventually { s.receiver.accepted.count >= 7 })
        // Once the outbox is empty nothing more can be sent: only then count what arrived.
        #expect(await eventually { await s.metric("broker_webhook_outbox_pending") == 0 })
        let events = s.receiver.accepted
        #expect(
            events.compactMap(\.type).sorted() == [
                "account.connected", "account.deleted", "account.reauthorization_required", "account.reconnected",
                "account.reconnected", "account.refresh_failed", "flow.failed",
            ])
        #expect(events.allSatisfy(Self.isSigned))
        #expect(Set(events.compactMap(\.id)).count == 7)
        let byType = Dictionary(events.map { ($0.type ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byType["account.connected"]?.data("account_id") as? String == "acme:4242")
        #expect(byType["account.connected"]?.data("uid") as? String == "4242")
        #expect(byType["account.connected"]?.data("status") as? String == "active")
        #expect(byType["account.deleted"]?.data("revoked") as? Bool == true)
        #expect(byType["account.deleted"]?.data("status") as? String == "deleted")
        #expect(byType["flow.failed"]?.data("error") as? String == "access_denied")
        #expect(byType["flow.failed"]?.data("provider") as? String == "acme")
        #expect(byType["account.refresh_failed"]?.data("error") as? String == "upstream_error")
        #expect(byType["account.reauthorization_required"]?.data("status") as? String == "reauthorization_required")
        // No token, secret or code in any event, nor in the outbox on disk.
        #expect(!events.contains { String(decoding: $0.body, as: UTF8.self).contains("SENTINEL") })
        #expect(!s.broker.dataDirectoryText().contains("SENTINEL"))
        #expect(await s.metric("broker_webhook_deliveries_total{type=\"account.reconnected\",outcome=\"delivered\"}") == 2)
        #expect(await s.metric("broker_webhook_outbox_pending") == 0)
        await s.stop()
    }

    @Test func aReceiverThatFailsThreeTimesGetsTheSameEventOnTheFourthTry() async throws {
        // The timeout is one of the failures: 5 s, short for a test, long for a local answer on a loaded machine.
        let s = try await Self.setUp(["BROKER_WEBHOOK_TIMEOUT": "5"])
        defer { s.receiver.release() }
        // A 500, a request never answered (the timeout ends it), a 503, then 200.
        s.receiver.script([.status(500), .gated(200), .status(503)])
        #expect(await s.connect() == 200)
        #expect(await eventually { s.receiver.accepted.count == 1 })
        let all = s.receiver.received
        #expect(all.count == 4)
        #expect(Set(all.map(\.eventID)).count == 1)
        #expect(Set(all.map(\.body)).count == 1)
        #expect(all.allSatisfy(Self.isSigned))
        #expect(await s.metric("broker_webhook_deliveries_total{type=\"account.connected\",outcome=\"retry\"}") == 3)
        #expect(await s.metric("broker_webhook_deliveries_total{type=\"account.connected\",outcome=\"delivered\"}") == 1)
        // A 500 says nothing answers there: one line for the receiver going down, one when it answers again.
        #expect(s.broker.log.contains("\"msg\":\"webhook receiver down"))
        #expect(s.broker.log.contains("\"msg\":\"webhook receiver back up"))
        s.receiver.release()
        await s.stop()
    }

    @Test func aReceiverDownForAWhileGetsEverythingAfterwardsAlsoAcrossARestart() async throws {
        // A down receiver is probed at the pace of the timeout (see downTimeout).
        let s = try await Self.setUp(Self.downTimeout)
        await s.receiver.stop()
        for user in 1...5 { #expect(await s.connect(user: user) == 200) }
        // Readiness never depends on the receiver.
        #expect(await TestHTTP.send(port: s.broker.port, target: "/readyz")?.status == 200)
        #expect(
            await eventually { await s.metric("broker_webhook_deliveries_total{type=\"account.connected\",outcome=\"retry\"}") ?? 0 >= 10 })
        let listing = try #require(await s.get("/webhooks"))
        #expect(listing.status == 200)
        #expect(listing.body.contains("\"pending_count\":5"))
        #expect(listing.body.contains("\"last_error\":\"connection refused\""))
        #expect(await s.metric("broker_webhook_outbox_pending") == 5)
        // A restart of the broker while the receiver is down: the outbox is read back and delivery resumes.
        await s.broker.stop()
        let restarted = try BrokerHarness(
            providersJSON: "{\"providers\": {\(s.provider.providerEntry)}}",
            environment: Self.environment(s.receiver, Self.downTimeout), dataDirectory: s.broker.dataDirectory)
        // The restarted broker read the outbox back: it tries the receiver, still down, before it comes back.
        #expect(
            await eventually {
                let text = await TestHTTP.send(port: restarted.port, target: "/metrics")?.body ?? ""
                return RefreshEndToEndTests.metric(text, "broker_webhook_deliveries_total{type=\"account.connected\",outcome=\"retry\"}")
                    ?? 0 >= 1
            })
        try s.receiver.start()
        #expect(await eventually { Set(s.receiver.accepted.compactMap { $0.data("account_id") as? String }).count == 5 })
        #expect(Set(s.receiver.accepted.compactMap { $0.data("account_id") as? String }) == Set((1...5).map { "acme:\($0)" }))
        #expect(
            await eventually {
                await TestHTTP.send(port: restarted.port, target: "/metrics")?.body.contains("broker_webhook_outbox_pending 0") == true
            })
        await restarted.stop()
        await s.receiver.stop()
    }

    @Test func operatorsListDroppedDeliveriesAndReplayThemFromTheCommandLine() async throws {
        let s = try await Self.setUp(["BROKER_WEBHOOK_RETRY_FOR": "1"])
        s.receiver.script([], then: .status(500))
        #expect(await s.connect() == 200)
        #expect(await eventually { await s.metric("broker_webhook_outbox_dropped") == 1 })
        #expect(s.broker.log.contains("\"level\":\"error\",\"msg\":\"webhook delivery dropped\""))
        #expect(await TestHTTP.send(port: s.broker.port, target: "/webhooks")?.status == 401)
        let listing = try #require(await s.get("/webhooks")).body
        #expect(listing.contains("\"dropped_count\":1") && listing.contains("\"last_error\":\"HTTP 500\""))
        let cli = ["BROKER_PORT": String(s.broker.port), "BROKER_API_KEY": BrokerHarness.apiKey, "PATH": "/usr/bin:/bin"]
        let (listed, listOutput) = try await runBrokerCapturingStdout(["webhooks", "list"], environment: cli)
        #expect(listed == 0)
        let eventID = try #require(s.receiver.received.first?.eventID)
        #expect(listOutput.contains("dropped: 1") && listOutput.contains(eventID + ".0") && listOutput.contains("error=HTTP 500"))
        s.receiver.script([], then: .status(200))
        let (replayed, replayOutput) = try await runBrokerCapturingStdout(["webhooks", "replay", eventID], environment: cli)
        #expect(replayed == 0 && replayOutput.contains("replayed 1"))
        #expect(await eventually { s.receiver.accepted.count == 1 })
        #expect(s.receiver.accepted.first?.eventID == eventID)
        let (missing, _) = try await runBrokerCapturingStdout(["webhooks", "replay", "evt_0123"], environment: cli)
        #expect(missing == 1)
        // BROKER_URL wins over the port, as for `accounts` (a broker on another host, behind a path prefix).
        let elsewhere = try LocalHTTPServer.listenOnLoopback(backlog: 1)
        close(elsewhere.descriptor)  // a port nobody listens on any more
        let url = "http://127.0.0.1:\(s.broker.port)"
        let remote = cli.merging(["BROKER_PORT": String(elsewhere.port), "BROKER_URL": url]) { $1 }
        let (viaURL, viaURLOutput) = try await runBrokerCapturingStdout(["webhooks", "list"], environment: remote)
        #expect(viaURL == 0 && viaURLOutput.contains("pending: ") && viaURLOutput.contains("dropped: "))
        // A refusal names the URL that refused, the status and the broker's message; never the key.
        let wrongKey = remote.merging(["BROKER_API_KEY": "not-the-key-0123456789"]) { $1 }
        let refused = try await runBrokerCapturingOutput(["webhooks", "list"], environment: wrongKey)
        #expect(refused.status == 1 && refused.stderr.contains("GET /webhooks at \(url): 401 unauthorized"))
        #expect(!refused.stderr.contains("not-the-key"))
        let gone = try await runBrokerCapturingOutput(
            ["webhooks", "list"], environment: cli.merging(["BROKER_URL": "http://127.0.0.1:\(elsewhere.port)"]) { $1 })
        #expect(gone.status == 1 && gone.stderr.contains("cannot reach the broker at http://127.0.0.1:\(elsewhere.port)"))
        await s.stop()
    }

    @Test func badWebhookSettingsStopStartUpNamingTheVariable() async throws {
        let url = ["BROKER_WEBHOOK_URL": "https://app.example.com/hooks"]
        let cases: [([String: String], String)] = [
            (url, "BROKER_WEBHOOK_SECRET"),
            (url.merging(["BROKER_WEBHOOK_SECRET": "short"]) { $1 }, "BROKER_WEBHOOK_SECRET"),
            (["BROKER_WEBHOOK_URL": "ftp://x/y", "BROKER_WEBHOOK_SECRET": Self.secret], "BROKER_WEBHOOK_URL"),
            (["BROKER_WEBHOOK_URL": "https://user:pw@x/y", "BROKER_WEBHOOK_SECRET": Self.secret], "BROKER_WEBHOOK_URL"),
            (
                url.merging(["BROKER_WEBHOOK_SECRET": Self.secret, "BROKER_WEBHOOK_EVENTS": "account.connected,account.exploded"]) { $1 },
                "BROKER_WEBHOOK_EVENTS"
            ),
            (
                url.merging(["BROKER_WEBHOOK_SECRET": Self.secret, "BROKER_WEBHOOK_RETRY_BASE": "60", "BROKER_WEBHOOK_RETRY_CAP": "10"]) {
                    $1
                },
                "BROKER_WEBHOOK_RETRY_CAP"
            ),
            (url.merging(["BROKER_WEBHOOK_SECRET": Self.secret, "BROKER_WEBHOOK_RETRY_FOR": "0"]) { $1 }, "BROKER_WEBHOOK_RETRY_FOR"),
        ]
        for (environment, variable) in cases {
            #expect(throws: ConfigurationError.self) { try BrokerConfiguration.from(environment: environment) }
            do {
                _ = try BrokerConfiguration.from(environment: environment)
            } catch {
                #expect(error.variable == variable)
                #expect(!error.message.contains("pw"))
            }
        }
        let chosen = try BrokerConfiguration.from(
            environment: url.merging([
                "BROKER_WEBHOOK_SECRET": Self.secret, "BROKER_WEBHOOK_EVENTS": "account.deleted, flow.failed",
            ]) { $1 })
        #expect(chosen.webhooks?.events == [.accountDeleted, .flowFailed])
        #expect(try BrokerConfiguration.from(environment: [:]).webhooks == nil)
        // The process exits 2 naming the variable; config check shows receivers without their query.
        let directory = NSTemporaryDirectory() + "webhook-config-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (status, stderr) = try await runBroker([], environment: url.merging(["BROKER_DATA_DIR": directory, "BROKER_PORT": "0"]) { $1 })
        #expect(status == 2)
        #expect(stderr.contains("BROKER_WEBHOOK_SECRET"))
        let (checked, report) = try await runBrokerCapturingStdout(
            ["config", "check"],
            environment: [
                "BROKER_WEBHOOK_URL": "https://app.example.com/hooks?token=QUERY-SENTINEL", "BROKER_WEBHOOK_SECRET": Self.secret,
            ])
        #expect(checked == 0)
        #expect(report.contains("https://app.example.com/hooks") && !report.contains("QUERY-SENTINEL") && !report.contains(Self.secret))
    }
}

/// Runs the `token-broker` executable to completion; (exit status, stdout then stderr).
func runBrokerCapturingStdout(_ arguments: [String], environment: [String: String]) async throws -> (Int32, String) {
    try await offPool {
        let process = try ChildProcess(
            executable: BrokerProcess.executable.path, arguments: arguments, environment: environment,
            stdout: .capture, stderr: .capture)
        let status = process.waitUntilExit()
        process.drainOutput()
        return (status, process.outputText + process.errorText)
    }
}
