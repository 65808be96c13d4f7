import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Scheduled verification, driven sweep by sweep: a key the provider starts refusing makes the account `invalid`
/// (409 on `GET /account`, its own status in `/accounts` and `/metrics`, `account.invalid`); a pass makes it `active`
/// again (`account.recovered`); a provider that cannot be reached changes nothing.
@Suite(.scoped) struct CredentialVerificationSweepTests {
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Content-Type", "application/json")]
    static let token = "SENTINEL-TOKEN-sweep-93"

    func send(_ broker: BrokerHarness, _ method: String, _ target: String, _ body: String = "") async throws -> TestHTTP.Reply {
        try #require(await TestHTTP.send(port: broker.port, method: method, target: target, headers: Self.api, body: body))
    }

    @Test func aRefusedKeyBecomesInvalidAndRecoversWhenItPassesAgainButAnUnreachableProviderChangesNothing() async throws {
        let fake = FakeCredentialProvider(apiKey: "k", token: Self.token, username: "u", password: "p")
        try fake.start()
        TestScope.required("a fake provider")?.onEnd { await fake.stop() }
        let receiver = try WebhookReceiver()
        TestScope.required("a webhook receiver")?.onEnd { await receiver.stop() }
        let clock = TestClock()
        let broker = try BrokerHarness(
            providersJSON: fake.providersFile,
            environment: [
                "BROKER_WEBHOOK_URL": receiver.url, "BROKER_WEBHOOK_SECRET": "whsec-sweep-tests-0123456789abcdef",
                "BROKER_WEBHOOK_RETRY_BASE": "0.1", "BROKER_WEBHOOK_RETRY_CAP": "0.4",
            ], now: clock.function)
        let sweep = broker.broker.credentialSweep
        #expect(sweep.interval == 0, "off by default")
        let created = try await send(
            broker, "POST", "/accounts", #"{"provider":"bearerp","uid":"t1","credentials":{"token":"\#(Self.token)"}}"#)
        #expect(created.status == 201, "\(created.body)")

        // 1. The key still works: nothing changes.
        var summary = await sweep.runOnce()
        #expect(summary == CredentialVerificationSweep.Summary(ran: true, valid: 1))
        // Another sweep within the interval (another replica, or this one) is skipped: the lock is held.
        #expect(await sweep.runOnce() == CredentialVerificationSweep.Summary(ran: false))
        // The lease runs out on the broker's clock: the next sweep runs.
        clock.advance(61)

        // 2. The provider revokes it: invalid, 409 on reads, its own status in lists and metrics, account.invalid.
        fake.update { $0.token = "rotated" }
        summary = await sweep.runOnce()
        #expect(summary == CredentialVerificationSweep.Summary(ran: true, refused: 1))
        let read = try await send(broker, "GET", "/account?id=bearerp:t1")
        #expect(read.status == 409 && read.body.contains("credential_invalid"), "\(read.body)")
        #expect(try await send(broker, "GET", "/accounts?status=invalid").body.contains("bearerp:t1"))
        #expect(try await send(broker, "GET", "/accounts?status=active").body.contains("bearerp:t1") == false)
        #expect(try await send(broker, "GET", "/metrics").body.contains(#"broker_accounts{status="invalid"} 1"#))
        #expect(await eventually { receiver.received.contains { $0.type == "account.invalid" } })
        // POST /account/verify agrees, and the account stays invalid.
        #expect(try await send(broker, "POST", "/account/verify?id=bearerp:t1").status == 422)

        // 3. It works again: POST /account/verify brings it back, with account.recovered.
        fake.update { $0.token = Self.token }
        #expect(try await send(broker, "POST", "/account/verify?id=bearerp:t1").status == 200)
        #expect(try await send(broker, "GET", "/account?id=bearerp:t1").status == 200)
        #expect(await eventually { receiver.received.contains { $0.type == "account.recovered" } })

        // 4. The provider is down: a transport error is no verdict, the account stays active.
        await fake.stop()
        clock.advance(61)
        summary = await sweep.runOnce()
        #expect(summary == CredentialVerificationSweep.Summary(ran: true, unreachable: 1))
        #expect(try await send(broker, "GET", "/account?id=bearerp:t1").status == 200)
        #expect(receiver.received.filter { $0.type == "account.invalid" }.count == 1)
        #expect(!receiver.received.contains { String(decoding: $0.body, as: UTF8.self).contains(Self.token) })
    }
}
