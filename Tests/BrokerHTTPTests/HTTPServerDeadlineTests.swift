import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerHTTP

/// Deadlines with short configured values: header drip, slow body, idle keep-alive.
@Suite struct HTTPServerDeadlineTests {
    @Test func headerDripIsCutAtTheTotalHeaderDeadline() async throws {
        try await TestServer.with({ $0.headerTimeout = 0.5 }) { server in
            let client = try RawClient(port: server.port)
            client.send("GET /healthz HTTP/1.1\r\n")
            // One header line every 100 ms, and never the blank line that ends the head: only a deadline on the
            // whole head can answer, and it must be the 408 (the bound of 3,000 lines, five minutes, is the
            // failing test's, not a speed target).
            var reply: RawClient.Reply?
            client.setTimeout(0.01)
            for i in 0..<3000 {
                client.send("X-Drip-\(i): 1\r\n")
                try await Task.sleep(nanoseconds: 100_000_000)
                if let r = await client.readResponse() { reply = r; break }
            }
            #expect(reply?.status == 408)
            #expect(reply?.header("Connection") == "close")
        }
    }

    @Test func slowBodyIsCutAtTheBodyDeadline() async throws {
        try await TestServer.with({ $0.bodyTimeout = 0.4 }) { server in
            let client = try RawClient(port: server.port)
            client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
            let reply = try #require(await client.readResponse())
            #expect(reply.status == 408)
            #expect(await client.readsEOF())
        }
    }

    @Test func idleKeepAliveConnectionIsClosedWithFIN() async throws {
        try await TestServer.with({ $0.idleTimeout = 0.3 }) { server in
            let client = try RawClient(port: server.port)
            client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await client.readResponse()?.status == 200)
            // recv returns 0 (FIN), not ECONNRESET, and before the client's own minute runs out (the 75 s
            // default would not have).
            #expect(await client.readsEOF())
            #expect(await eventually { server.openConnections == 0 })
        }
    }

    @Test func silentConnectionWithoutBytesIsClosedAtIdleTimeout() async throws {
        try await TestServer.with({ $0.idleTimeout = 0.3 }) { server in
            let client = try RawClient(port: server.port)
            #expect(await client.readsEOF())
        }
    }
}
