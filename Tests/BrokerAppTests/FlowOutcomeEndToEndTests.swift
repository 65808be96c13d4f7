import BrokerCore
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// `GET /flows/{state}` with the in-process broker, the real fake provider and a test clock: a back end
/// starts a flow with `POST /authorize` and learns how it ended by its state.
@Suite(.scoped) struct FlowOutcomeEndToEndTests {
    static let clientSecret = "ACME-CLIENT-SECRET-flow-outcomes"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    struct Setup {
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness
        let clock: TestClock

        /// `POST /authorize` for the fake provider; returns the state and the provider URL.
        func start(returnTo: String? = nil, endUserID: String? = nil) async throws -> (state: String, authorizeURL: String) {
            var body = "{\"provider\":\"acme\""
            if let returnTo { body += ",\"return_to\":\"\(returnTo)\"" }
            if let endUserID { body += ",\"end_user_id\":\"\(endUserID)\"" }
            let reply = await broker.respond(
                .POST, "/authorize", headers: FlowOutcomeEndToEndTests.api + [("Content-Type", "application/json")], body: body + "}")
            #expect(reply.status.code == 200)
            let json = FlowOutcomeEndToEndTests.json(reply)
            let state = try #require(json["state"] as? String)
            let authorizeURL = try #require(json["authorize_url"] as? String)
            return (state, authorizeURL)
        }

        /// The browser's part: the provider's page (approving or denying), then the callback, answered in process.
        func finish(_ authorizeURL: String) async throws -> Response {
            let url = try #require(URL(string: authorizeURL))
            let page = try #require(await TestHTTP.send(port: provider.port, target: url.path + "?" + (url.query ?? "")))
            let location = try #require(page.header("Location"))
            let back = try #require(URL(string: location))
            return await broker.respond(.GET, back.path + "?" + (back.query ?? ""), headers: [("Accept", "application/json")])
        }

        /// `GET /flows/{state}` with the API key.
        func outcome(_ state: String) async -> (status: Int, json: [String: Any]) {
            let reply = await broker.respond(.GET, "/flows/" + state, headers: FlowOutcomeEndToEndTests.api)
            return (reply.status.code, FlowOutcomeEndToEndTests.json(reply))
        }
    }

    static func setUp(dataDirectory: String? = nil, clock: TestClock = TestClock(Date())) throws -> Setup {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: clientSecret))
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry())}}",
            environment: ["FAKE_ACME_SECRET": clientSecret, "BROKER_REFRESH_INTERVAL": "0", "BROKER_FLOW_TTL": "600"],
            dataDirectory: dataDirectory, now: clock.function, listen: false)
        return Setup(provider: provider, broker: broker, clock: clock)
    }

    static func json(_ response: Response) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    @Test func aCompletedFlowReadsPendingThenCompletedWithTheAccountUntilTheTTLAfterItEnded() async throws {
        let s = try Self.setUp()
        let (state, authorizeURL) = try await s.start(returnTo: "https://app.example.com/done", endUserID: "user-42")
        let pending = await s.outcome(state)
        #expect(pending.status == 200)
        #expect(pending.json["status"] as? String == "pending")
        #expect(pending.json["provider"] as? String == "acme" && pending.json["state"] as? String == state)
        #expect(pending.json["ended_at"] is NSNull && pending.json["account"] is NSNull)
        #expect(pending.json["end_user_id"] as? String == "user-42")
        // Every member, and nothing of the flow's secrets (verifier, binding, return_to, nonce).
        #expect(
            Set(pending.json.keys) == ["state", "status", "provider", "account", "end_user_id", "tags", "error", "expires_at", "ended_at"])

        s.clock.advance(30)
        let callback = try await s.finish(authorizeURL)
        #expect(callback.status.code == 302)
        let location = try #require(callback.headers["Location"])
        let query = try #require(URLComponents(string: location)?.queryItems)
        let account = try #require(query.first { $0.name == "account" }?.value)
        #expect(location.hasPrefix("https://app.example.com/done?account="))
        #expect(query.first { $0.name == "state" }?.value == state)

        let completed = await s.outcome(state)
        #expect(completed.status == 200)
        #expect(completed.json["status"] as? String == "completed")
        #expect(completed.json["account"] as? String == account)
        #expect(completed.json["error"] is NSNull && completed.json["end_user_id"] as? String == "user-42")
        #expect(completed.json["ended_at"] as? String == RFC3339Date.format(s.clock.now))

        // Kept BROKER_FLOW_TTL after it ended, past the flow's own expiry; gone after that.
        s.clock.advance(599)
        #expect(await s.outcome(state).json["status"] as? String == "completed")
        s.clock.advance(2)
        let gone = await s.outcome(state)
        #expect(gone.status == 404 && gone.json["error"] as? String == "not_found")
    }

    @Test func aDeniedFlowReadsFailedWithTheCodeTheBrowserSaw() async throws {
        let s = try Self.setUp()
        let (state, authorizeURL) = try await s.start()
        s.provider.set { $0.deny = true }
        let callback = try await s.finish(authorizeURL)
        #expect(callback.status.code == 403)
        #expect(Self.json(callback)["error"] as? String == "access_denied")
        let failed = await s.outcome(state)
        #expect(failed.status == 200)
        #expect(failed.json["status"] as? String == "failed" && failed.json["error"] as? String == "access_denied")
        #expect(failed.json["account"] is NSNull && failed.json["ended_at"] is String)
    }

    @Test func aFlowNobodyFinishedReadsExpiredAndALateCallbackLeavesItSo() async throws {
        let s = try Self.setUp()
        let (state, authorizeURL) = try await s.start()
        let expiresAt = await s.outcome(state).json["expires_at"] as? String
        s.clock.advance(601)
        let expired = await s.outcome(state)
        #expect(expired.json["status"] as? String == "expired")
        #expect(expired.json["ended_at"] as? String == expiresAt)
        let late = try await s.finish(authorizeURL)
        #expect(late.status.code == 400 && Self.json(late)["error"] as? String == "invalid_state")
        #expect(await s.outcome(state).json["status"] as? String == "expired")
        // BROKER_FLOW_TTL after it expired, it is forgotten.
        s.clock.advance(600)
        #expect(await s.outcome(state).status == 404)
    }

    @Test func unknownMalformedAndUnauthorizedStatesAreRefused() async throws {
        let s = try Self.setUp()
        let (state, _) = try await s.start()
        #expect(await s.outcome(String(repeating: "A", count: 43)).status == 404)
        #expect(await s.outcome("short").status == 404)
        let long = await s.outcome(String(repeating: "A", count: 129))
        #expect(long.status == 400 && long.json["error"] as? String == "bad_request")
        #expect(await s.outcome("a%2Fb").status == 400)
        #expect(await s.outcome("a.b").status == 400)
        let anonymous = await s.broker.respond(.GET, "/flows/" + state)
        #expect(anonymous.status.code == 401)
        let wrongKey = await s.broker.respond(.GET, "/flows/" + state, headers: [("Authorization", "Bearer wrong-key-0123456789abcdef")])
        #expect(wrongKey.status.code == 401)
        #expect(await s.broker.respond(.POST, "/flows/" + state, headers: Self.api).status.code == 405)
    }

    @Test func theFileStoreKeepsOutcomesAcrossARestart() async throws {
        let directory = try TemporaryDirectory.scoped(prefix: "broker-flow-outcomes") + "/data"
        let clock = TestClock(Date())
        let first = try Self.setUp(dataDirectory: directory, clock: clock)
        let (done, doneURL) = try await first.start()
        #expect(try await first.finish(doneURL).status.code == 200)
        let (waiting, _) = try await first.start()
        await first.broker.stop()

        let second = try Self.setUp(dataDirectory: directory, clock: clock)
        #expect(await second.outcome(done).json["status"] as? String == "completed")
        #expect(await second.outcome(done).json["account"] is String)
        #expect(await second.outcome(waiting).json["status"] as? String == "pending")
    }
}
