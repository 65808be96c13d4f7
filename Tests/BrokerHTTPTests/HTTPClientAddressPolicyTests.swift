import BrokerHTTP
import Testing

/// The client's address check on real sockets: a refused address gets no connection, whatever the pool holds.
///
/// Absence is proved by order: the listener counts what it accepts, so after a refused call a call without the
/// policy must be its first connection and carry its first request.
struct HTTPClientAddressPolicyTests {
    static func get(_ url: String, policy: AddressPolicy? = nil) -> HTTPClientRequest {
        HTTPClientRequest(method: "GET", url: url, addressPolicy: policy)
    }

    @Test func aRefusedAddressIsNeverConnectedTo() async throws {
        let server = try FakeUpstream { _, _ in .reply(HTTPClientTests.ok) }
        defer { server.stop() }
        let client = HTTPClientTests.client()
        for url in [server.url("/refused"), "http://localhost:\(server.port)/refused"] {
            await #expect(throws: HTTPClientError.addressRefused) {
                _ = try await client.execute(Self.get(url, policy: .publicOnly), timeout: 60, maxBodyBytes: 64)
            }
        }
        let (head, _) = try await client.execute(Self.get(server.url("/unchecked")), timeout: 60, maxBodyBytes: 64)
        #expect(head.status == 200 && server.accepted == 1)
        #expect(server.requests.count == 1 && server.requests[0].hasPrefix("GET /unchecked HTTP/1.1\r\n"))
        #expect(client.openConnections(to: server.url("/"), addressPolicy: .publicOnly) == 0)
    }

    @Test func anIdleConnectionMadeWithoutTheCheckIsNotHandedToACheckedCall() async throws {
        let server = try FakeUpstream { _, _ in .reply(HTTPClientTests.ok) }
        defer { server.stop() }
        let client = HTTPClientTests.client()
        _ = try await client.execute(Self.get(server.url("/first")), timeout: 60, maxBodyBytes: 64)
        #expect(client.openConnections(to: server.url("/")) == 1)
        await #expect(throws: HTTPClientError.addressRefused) {
            _ = try await client.execute(Self.get(server.url("/refused"), policy: .publicOnly), timeout: 60, maxBodyBytes: 64)
        }
        // The unchecked connection is still idle and still the only one; the refused call wrote nothing on it.
        _ = try await client.execute(Self.get(server.url("/second")), timeout: 60, maxBodyBytes: 64)
        #expect(server.accepted == 1 && server.requests.count == 2)
        #expect(!server.requests.contains { $0.contains("/refused") })
    }

    @Test func aHostOnTheAllowListIsConnectedToWhateverItsAddress() async throws {
        let server = try FakeUpstream { _, _ in .reply(HTTPClientTests.ok) }
        defer { server.stop() }
        let client = HTTPClientTests.client()
        let policy = AddressPolicy(allowedHosts: ["127.0.0.1"])
        let (head, _) = try await client.execute(
            Self.get(server.url("/allowed"), policy: policy), timeout: 60, maxBodyBytes: 64)
        #expect(head.status == 200 && server.accepted == 1)
        #expect(server.requests.first?.hasPrefix("GET /allowed HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n") == true)
        // Another host is not covered by that entry.
        await #expect(throws: HTTPClientError.addressRefused) {
            _ = try await client.execute(
                Self.get("http://localhost:\(server.port)/other", policy: policy), timeout: 60, maxBodyBytes: 64)
        }
        #expect(server.accepted == 1)
    }

    @Test func theRefusalHasItsOwnMetricsLabel() {
        #expect(HTTPClientError.addressRefused.code == "address_refused")
        #expect(HTTPClientError.addressRefused.description == "address_refused")
    }
}
