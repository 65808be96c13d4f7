import BrokerHTTP
import BrokerTestSupport
import Testing

/// `https://` on the native client against a real nginx with certificates from a test CA.
@Suite(.scoped) struct TLSClientTests {
    static func client(caFile: String?) -> HTTPClient {
        HTTPClient(
            configuration: HTTPClient.Configuration(connectTimeout: 10, maxConnectionsPerHost: 4, idleTimeout: 30, caFile: caFile))
    }

    static func get(_ url: String) -> HTTPClientRequest { HTTPClientRequest(method: "GET", url: url) }

    @Test func aValidChainFromTheAddedCAIsAcceptedAndItsConnectionReused() async throws {
        let server = try await TLSTestServer.scoped()
        let client = Self.client(caFile: server.caFile)
        for _ in 0..<3 {
            let (head, body) = try await client.execute(Self.get(server.url(.valid)), timeout: 30, maxBodyBytes: 1024)
            #expect(head.status == 200)
            #expect(String(decoding: body, as: UTF8.self) == "hello from valid\n")
        }
        #expect(client.openConnections(to: server.url(.valid)) == 1)
    }

    @Test func eachBadServerIsRefusedWithItsOwnCause() async throws {
        let server = try await TLSTestServer.scoped()
        let client = Self.client(caFile: server.caFile)
        var seen: [TLSTestServer.Case: HTTPClientError] = [:]
        for which in TLSTestServer.Case.allCases where which != .valid {
            do {
                _ = try await client.execute(Self.get(server.url(which)), timeout: 30, maxBodyBytes: 1024)
                Issue.record("\(which) was accepted")
            } catch {
                seen[which] = error
            }
        }
        #expect(seen[.expired] == .tlsCertificate(reason: "certificate has expired"))
        #expect(seen[.notYetValid] == .tlsCertificate(reason: "certificate is not yet valid"))
        #expect(seen[.wrongHost] == .tlsHostname)
        #expect(seen[.selfSigned]?.code == "tls_certificate" && "\(seen[.selfSigned]!)".contains("self"))
        #expect(seen[.unknownCA] == .tlsCertificate(reason: "unable to get local issuer certificate"))
        #expect(seen[.tls10Only] == .tlsVersion)
        // Each refusal names a different cause.
        #expect(Set(seen.values.map(\.description)).count == seen.count)
    }

    @Test func withoutTheCAFileTheTestChainIsUnknown() async throws {
        let server = try await TLSTestServer.scoped()
        await #expect(throws: HTTPClientError.tlsCertificate(reason: "unable to get local issuer certificate")) {
            _ = try await Self.client(caFile: nil).execute(Self.get(server.url(.valid)), timeout: 30, maxBodyBytes: 1024)
        }
    }

    @Test func anUnreadableCAFileFailsEveryHTTPSCallNamingIt() async throws {
        await #expect(throws: HTTPClientError.tlsHandshake(reason: "the file cannot be read")) {
            _ = try await Self.client(caFile: "/nonexistent/ca.pem").execute(
                Self.get("https://localhost:1/"), timeout: 5, maxBodyBytes: 1024)
        }
    }
}
