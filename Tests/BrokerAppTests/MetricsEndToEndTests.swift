import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// `/metrics` read from a real broker after real sign-ins against an in-process OAuth 2.0 provider, on a listener of its own.
@Suite(.scoped) struct MetricsEndToEndTests {
    static let clientSecret = "ACME-CLIENT-SECRET-SENTINEL-0123456789"

    /// Every sample in an exposition text, by series (name and labels as written) → value.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// The broker's metrics as the metrics listener serves them.
    static func scrape(_ broker: BrokerHarness) async throws -> (text: String, samples: [String: Double]) {
        let port = try #require(broker.broker.metricsPort)
        let reply = try #require(await TestHTTP.send(port: port, target: "/metrics"))
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == MetricsRenderer.contentType)
        return (reply.body, samples(reply.body))
    }

    @Test func signInsProviderCallsAndAccountsAreCountedOnTheMetricsListener() async throws {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: Self.clientSecret))
        provider.set { $0.refreshTokens = .none }
        let clock = TestClock(Date())
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry)}}",
            environment: ["FAKE_ACME_SECRET": Self.clientSecret, "BROKER_METRICS_ADDR": "127.0.0.1:0", "BROKER_REFRESH_INTERVAL": "0"],
            now: { clock.now })
        let browser = Browser(brokerPort: broker.port, providerPort: provider.port)
        let before = try await Self.scrape(broker).samples
        #expect(before["broker_flows_started_total{provider=\"acme\"}"] == 0)
        #expect(before["broker_flows_completed_total{provider=\"acme\"}"] == 0)
        #expect(before["broker_accounts{status=\"active\"}"] == 0)

        // One sign-in that completes, one whose token answer has no token, one callback nobody started,
        // and one authorize for a provider that does not exist.
        #expect(await browser.connect(provider: "acme")?.status == 200)
        provider.set { $0.exchangeBody = "{\"token_type\":\"bearer\"}" }
        #expect(await browser.connect(provider: "acme")?.status == 502)
        provider.set { $0.exchangeBody = nil }
        #expect(await browser.get("/callback?state=no-such-flow&code=x")?.status == 400)
        #expect(await browser.authorize("provider=evil-label")?.status == 404)

        let (text, after) = try await Self.scrape(broker)
        #expect(after["broker_flows_started_total{provider=\"acme\"}"] == 2)
        #expect(after["broker_flows_completed_total{provider=\"acme\"}"] == 1)
        #expect(after["broker_flows_failed_total{provider=\"acme\",reason=\"upstream_error\"}"] == 1)
        #expect(after["broker_flows_unmatched_total"] == 1)
        let exchange = "provider=\"acme\",step=\"token_exchange\""
        #expect(after["broker_provider_call_duration_seconds_count{\(exchange)}"] == 2)
        #expect(after["broker_provider_call_duration_seconds_bucket{\(exchange),le=\"+Inf\"}"] == 2)
        #expect((after["broker_provider_call_duration_seconds_sum{\(exchange)}"] ?? 0) > 0)
        #expect(after["broker_provider_call_failures_total{\(exchange),reason=\"upstream_error\"}"] == 1)
        #expect(after["broker_provider_call_duration_seconds_count{provider=\"acme\",step=\"user_info\"}"] == 1)
        #expect(after["broker_provider_call_failures_total{provider=\"acme\",step=\"user_info\",reason=\"upstream_error\"}"] == nil)
        #expect(after["broker_accounts{status=\"active\"}"] == 1)
        #expect(after["broker_accounts{status=\"expired\"}"] == 0)
        #expect(after["broker_accounts{status=\"reauthorization_required\"}"] == 0)
        // A name a request made up never becomes a label.
        #expect(!text.contains("evil-label"))
        #expect(after["broker_build_info{version=\"\(BrokerVersion.current)\"}"] == 1)

        // The token lives an hour and there is no refresh token: past it, the account counts as expired.
        clock.advance(3601)
        let expired = try await Self.scrape(broker).samples
        #expect(expired["broker_accounts{status=\"active\"}"] == 0)
        #expect(expired["broker_accounts{status=\"expired\"}"] == 1)

        // Disconnecting revokes: the revoke call is timed too, and the account leaves the gauge.
        let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
        #expect(await TestHTTP.send(port: broker.port, method: "DELETE", target: "/account?id=acme:4242", headers: api)?.status == 204)
        let deleted = try await Self.scrape(broker).samples
        #expect(deleted["broker_provider_call_duration_seconds_count{provider=\"acme\",step=\"revoke\"}"] == 1)
        #expect(deleted["broker_accounts{status=\"expired\"}"] == 0)
    }

    @Test func withAMetricsListenerTheMainPortHasNoMetricsAndTheListenerNothingElse() async throws {
        let broker = try BrokerHarness(providersJSON: "{\"providers\": {}}", environment: ["BROKER_METRICS_ADDR": "127.0.0.1:0"])
        let metricsPort = try #require(broker.broker.metricsPort)
        #expect(metricsPort != broker.port)
        #expect(await TestHTTP.send(port: broker.port, target: "/metrics")?.status == 404)
        #expect(await TestHTTP.send(port: broker.port, target: "/healthz")?.status == 200)
        #expect(await TestHTTP.send(port: metricsPort, target: "/healthz")?.status == 404)
        #expect(await TestHTTP.send(port: metricsPort, target: "/accounts")?.status == 404)
        #expect(await TestHTTP.send(port: metricsPort, method: "POST", target: "/metrics")?.status == 405)
        let text = try #require(await TestHTTP.send(port: metricsPort, target: "/metrics")).body
        // The main port's traffic is what it reports; scrapes of the listener are not mixed in.
        #expect(text.contains("broker_http_requests_total{route=\"/healthz\",status=\"2xx\"} 1\n"))
        #expect(text.contains("broker_http_requests_total{route=\"unmatched\",status=\"4xx\"} 1\n"))
        #expect(!text.contains("route=\"/metrics\""))
        #expect(broker.log.contains("\"metrics_port\":\(metricsPort)"))
    }

    @Test func withoutAListenerMetricsStayOnTheMainPort() async throws {
        let broker = try BrokerHarness(providersJSON: "{\"providers\": {}}")
        #expect(broker.broker.metricsPort == nil)
        let reply = try #require(await TestHTTP.send(port: broker.port, target: "/metrics"))
        #expect(reply.status == 200)
        #expect(reply.body.contains("# TYPE broker_provider_call_duration_seconds histogram\n"))
        #expect(reply.body.contains("# TYPE broker_accounts gauge\n"))
    }
}
