import BrokerHTTP
import BrokerTestSupport
import Dispatch
import Testing

/// The client's table of pools, one per origin, on real sockets: a pool goes once its last connection has closed and
/// nobody waits for one, so many origins called once leave nothing behind, and a pool in use always stays.
struct ConnectionPoolTests {
    static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"

    static func client(cap: Int = 8, idleTimeout: Double) -> HTTPClient {
        HTTPClient(configuration: HTTPClient.Configuration(maxConnectionsPerHost: cap, idleTimeout: idleTimeout))
    }

    static func get(_ url: String) -> HTTPClientRequest { HTTPClientRequest(method: "GET", url: url) }

    @Test func originsWhoseConnectionsIdledOutLeaveNoPool() async throws {
        let servers = try (0..<12).map { _ in try FakeUpstream { _, _ in .reply(Self.ok) } }
        defer { for server in servers { server.stop() } }
        let client = Self.client(idleTimeout: 0.2)
        for server in servers {
            let (head, _) = try await client.execute(Self.get(server.url("/")), timeout: 60, maxBodyBytes: 64)
            #expect(head.status == 200)
        }
        // Each pool keeps its keep-alive connection until the idle timeout closes it, and then goes.
        #expect(await eventually { client.poolCount == 0 })
        // An origin called again gets a new pool and a new connection.
        let (head, _) = try await client.execute(Self.get(servers[0].url("/again")), timeout: 60, maxBodyBytes: 64)
        #expect(head.status == 200 && servers[0].accepted == 2)
        #expect(servers.map(\.accepted).reduce(0, +) == 13)
    }

    @Test func originsThatRefuseOrCloseLeaveNoPool() async throws {
        let client = Self.client(idleTimeout: 30)
        for _ in 0..<24 {
            try await Loopback.withRefusingPort { port in
                await #expect(throws: HTTPClientError.connectRefused) {
                    _ = try await client.execute(Self.get("http://127.0.0.1:\(port)/"), timeout: 60, maxBodyBytes: 64)
                }
            }
            // The failed connect closed before the call returned, and its pool went with it.
            #expect(client.poolCount == 0)
        }
        let closing = try (0..<8).map { _ in
            try FakeUpstream { _, _ in .reply("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", close: true) }
        }
        defer { for server in closing { server.stop() } }
        for server in closing {
            let (head, _) = try await client.execute(Self.get(server.url("/")), timeout: 60, maxBodyBytes: 64)
            #expect(head.status == 204 && client.poolCount == 0)
        }
    }

    @Test func aPoolInUseIsNeverDropped() async throws {
        let gate = DispatchSemaphore(value: 0)
        let busy = try FakeUpstream { request, _ in
            guard request.hasPrefix("GET /held ") else { return .reply(Self.ok) }
            gate.wait()
            // Closing the only connection while a call waits in line: its place passes to the waiter.
            return .reply("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", close: true)
        }
        defer { busy.stop() }
        let others = try (0..<8).map { _ in
            try FakeUpstream { _, _ in .reply("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", close: true) }
        }
        defer { for server in others { server.stop() } }
        let client = Self.client(cap: 1, idleTimeout: 30)
        let held = Task { try await client.execute(Self.get(busy.url("/held")), timeout: 60, maxBodyBytes: 64).head.status }
        #expect(await eventually { busy.requests.count == 1 })
        let waiting = Task { try await client.execute(Self.get(busy.url("/waiting")), timeout: 60, maxBodyBytes: 64).head.status }
        #expect(await eventually { client.waitingCalls(to: busy.url("/")) == 1 })
        // Pools of other origins come and go meanwhile; the busy one stays.
        for server in others { _ = try await client.execute(Self.get(server.url("/")), timeout: 60, maxBodyBytes: 64) }
        #expect(client.poolCount == 1 && client.openConnections(to: busy.url("/")) == 1)
        gate.signal()
        #expect(try await held.value == 200)
        #expect(try await waiting.value == 200)
        // The waiter's connection is idle in the same pool: a third call reuses it, under the cap of one.
        let (head, _) = try await client.execute(Self.get(busy.url("/third")), timeout: 60, maxBodyBytes: 64)
        #expect(head.status == 200 && busy.accepted == 2 && busy.requests.count == 3)
        #expect(client.poolCount == 1 && client.openConnections(to: busy.url("/")) == 1)
    }
}
