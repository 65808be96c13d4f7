import BrokerApp
import BrokerCore
import BrokerTestSupport
import Testing

/// The broker's default upstream client over `https://`, against a real nginx with a test CA (`BROKER_UPSTREAM_CA_FILE`).
@Suite(.scoped) struct NativeTLSUpstreamTests {
    @Test func httpsGoesThroughTheNativeClientTrustingTheConfiguredCA() async throws {
        let server = try await TLSTestServer.scoped()
        let configuration = try BrokerConfiguration.from(environment: ["BROKER_UPSTREAM_CA_FILE": server.caFile])
        #expect(configuration.upstreamCAFile == server.caFile)
        let client = UpstreamClientFactory.native.make(timeout: 30, caFile: configuration.upstreamCAFile)
        let response = try await client.send(UpstreamRequest(method: "GET", url: server.url(.valid, path: "/token")))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "hello from valid\n")
    }

    @Test func refusalsNameTheirCauseAsATransportError() async throws {
        let server = try await TLSTestServer.scoped()
        let client = UpstreamClientFactory.native.make(timeout: 30, caFile: server.caFile)
        let expected: [(TLSTestServer.Case, UpstreamError)] = [
            (.expired, .transport(.tlsCertificate, "TLS certificate: certificate has expired")),
            (.wrongHost, .transport(.tlsHostname, "TLS certificate is not for this host")),
            (.tls10Only, .transport(.tlsVersion, "TLS version below 1.2 refused")),
        ]
        for (which, error) in expected {
            await #expect(throws: error, "\(which)") {
                _ = try await client.send(UpstreamRequest(method: "GET", url: server.url(which)))
            }
        }
    }

    @Test func anUnusableCAFileFailsAtStartNamingTheVariable() throws {
        #expect(throws: ConfigurationError.self) {
            _ = try BrokerConfiguration.from(environment: ["BROKER_UPSTREAM_CA_FILE": "/nonexistent/ca.pem"])
        }
    }
}
