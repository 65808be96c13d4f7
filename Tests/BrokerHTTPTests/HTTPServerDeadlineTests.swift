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
            // One header line every 100 ms: each arrives well inside any idle timer.
            var reply: RawClient.Reply?
            var linesSent = 0
            client.setTimeout(0.01)
            for i in 0..<40 {
                client.send("X-Drip-\(i): 1\r\n")
                linesSent += 1
                try await Task.sleep(nanoseconds: 100_000_000)
                if let r = await client.readResponse() { reply = r; break }
            }
            // Without a total deadline the drip would run 4 s and end in a 200.
            #expect(reply?.status == 408)
            #expect(reply?.header("Connection") == "close")
            // 0.5 s of drip is 5 lines; allow a loaded machine's scheduling slack, far short of the 40.
            #expect(linesSent < 25)
        }
    }

    @Test func slowBodyIsCutAtTheBodyDeadline() async throws {
        try await TestServer.with({ $0.bodyTimeout = 0.4 }) { server in
            let client = try RawClient(port: server.port)
            client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
            client.setTimeout(10)
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
            // recv returns 0 (FIN), not ECONNRESET, well before the 75 s default would have.
            client.setTimeout(10)
            #expect(await client.readsEOF())
            #expect(await eventually(timeout: 2) { server.openConnections == 0 })
        }
    }

    @Test func silentConnectionWithoutBytesIsClosedAtIdleTimeout() async throws {
        try await TestServer.with({ $0.idleTimeout = 0.3 }) { server in
            let client = try RawClient(port: server.port)
            client.setTimeout(10)
            #expect(await client.readsEOF())
        }
    }
}
