import BrokerCore
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Failed outbound calls counted by cause in `/metrics` and named in the log, from a real broker whose OpenID
/// providers' issuers are a port that refuses connections and an nginx with an expired certificate.
@Suite(.scoped) struct UpstreamErrorMetricsTests {
    static let secret = "UPSTREAM-ERROR-SECRET-SENTINEL-0123456789"

    /// A providers-file entry of an OpenID provider named `name` whose issuer is `issuer`.
    static func entry(_ name: String, issuer: String) -> String {
        "\"\(name)\": {\"kind\": \"oidc\", \"issuer\": \"\(issuer)\", \"client_id\": \"id-\(name)\", \"client_secret\": \"\(secret)\"}"
    }

    /// The `reason` `/providers` gives for `name`, once its discovery has failed.
    static func reason(_ broker: BrokerHarness, _ name: String) async -> String? {
        guard let reply = await TestHTTP.send(port: broker.port, target: "/providers"),
            let object = try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any],
            let items = object["providers"] as? [[String: Any]]
        else { return nil }
        return items.first { $0["name"] as? String == name }?["reason"] as? String
    }

    @Test func aRefusingPortAndAnExpiredCertificateAreCountedAndLoggedByCause() async throws {
        let tls = try await TLSTestServer.scoped()
        try await Loopback.withRefusingPort { refusing in
            let providers = [
                Self.entry("refused", issuer: "http://127.0.0.1:\(refusing)/tenant"),
                Self.entry("expired", issuer: tls.url(.expired, path: "/tenant")),
            ]
            let broker = try BrokerHarness(
                providersJSON: "{\"providers\": {\(providers.joined(separator: ", "))}}",
                environment: ["BROKER_UPSTREAM_CA_FILE": tls.caFile])
            // Each discovery fails once before /providers says so; retries may add more, never fewer.
            #expect(await eventually { await Self.reason(broker, "refused")?.hasPrefix("discovery failed: ") == true })
            #expect(await eventually { await Self.reason(broker, "expired")?.hasPrefix("discovery failed: ") == true })

            let reply = try #require(await TestHTTP.send(port: broker.port, target: "/metrics"))
            let samples = MetricsEndToEndTests.samples(reply.body)
            let series = { (cause: String) in samples["broker_upstream_errors_total{target=\"provider\",cause=\"\(cause)\"}"] ?? -1 }
            #expect(series("connect_refused") >= 1)
            #expect(series("tls_certificate") >= 1)
            #expect(series("tls_hostname") == 0)
            #expect(samples["broker_upstream_errors_total{target=\"webhook\",cause=\"connect_refused\"}"] == 0)
            // The metric names that were there before stay.
            #expect(reply.body.contains("# TYPE broker_provider_call_failures_total counter\n"))

            let lines = broker.log.split(separator: "\n").filter { $0.contains("\"msg\":\"provider call failed\"") }
            #expect(
                lines.contains {
                    $0.contains("\"cause\":\"connect_refused\"") && $0.contains("\"origin\":\"http://127.0.0.1:\(refusing)\"")
                })
            #expect(
                lines.contains {
                    $0.contains("\"cause\":\"tls_certificate\"") && $0.contains("certificate has expired")
                        && $0.contains("\"origin\":\"https://localhost:\(tls.port(.expired))\"")
                })
            // The origin only: no path, and never the client's secret.
            #expect(!lines.contains { $0.contains("well-known") || $0.contains("/tenant") })
            #expect(!broker.log.contains(Self.secret))
        }
    }

    @Test func theOriginKeepsSchemeHostAndPortOnly() {
        #expect(MeteredUpstreamClient.origin(of: "https://user:pw@example.com:8443/p/a?code=abc#f") == "https://example.com:8443")
        #expect(MeteredUpstreamClient.origin(of: "http://[::1]:80/x") == "http://[::1]:80")
        #expect(MeteredUpstreamClient.origin(of: "not a url") == "(invalid URL)")
    }

    @Test func everyCauseOfTheNativeClientHasItsLabel() {
        let errors: [HTTPClientError] = [
            .addressRefused, .connectRefused, .connectTimeout, .hostNotFound, .deadline, .tooLarge(limit: 1),
            .badResponse(reason: "x"),
            .connectionLost, .tlsCertificate(reason: "certificate has expired"), .tlsHostname, .tlsVersion,
            .tlsHandshake(reason: "x"), .invalidURL, .invalidRequest, .unsupportedScheme, .cancelled,
        ]
        for error in errors {
            let cause = EpollUpstreamClient.upstreamError(error).cause
            // The client's own code names the same cause, but for URL and scheme mistakes, which count as invalid requests.
            let expected = [HTTPClientError.invalidURL, .unsupportedScheme].contains(error) ? "invalid_request" : error.code
            #expect(cause.rawValue == expected, "\(error)")
        }
    }
}
