@testable import BrokerHTTP
import Foundation
import Testing

/// Handlers that wait never hold up other connections; shutdown drains in-flight work.
@Suite struct HTTPServerConcurrencyTests {
    @Test func aSlowHandlerDoesNotDelayAHundredOthers() async throws {
        try await TestServer.with { server in
            let port = server.port
            let slow = Task.detached { () -> (Int?, Double, Date) in
                let start = Date()
                let client = try RawClient(port: port, timeout: 10)
                client.send("GET /slow?ms=3000 HTTP/1.1\r\nHost: x\r\n\r\n")
                let status = await client.readResponse()?.status
                return (status, Date().timeIntervalSince(start), Date())
            }
            try await Task.sleep(nanoseconds: 100_000_000)
            let start = Date()
            let statuses = try await withThrowingTaskGroup(of: Int?.self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        let client = try RawClient(port: port)
                        client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                        return await client.readResponse()?.status
                    }
                }
                var all: [Int?] = []
                for try await status in group { all.append(status) }
                return all
            }
            let othersDone = Date()
            #expect(statuses.count == 100)
            #expect(statuses.allSatisfy { $0 == 200 })
            let (slowStatus, slowElapsed, slowDone) = try await slow.value
            #expect(slowStatus == 200)
            #expect(slowElapsed >= 2.9)
            // Had the slow handler held a worker, the requests queued behind it would end after it.
            #expect(othersDone < slowDone, "the 100 quick requests finished while the slow one still waited")
            #expect(othersDone.timeIntervalSince(start) < 2.5)
        }
    }

    @Test func shutdownLetsAnInFlightRequestFinishAndClosesIdleOnes() async throws {
        let server = try TestServer.start()
        let port = server.port
        let idle = try RawClient(port: port)
        idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await idle.readResponse()?.status == 200)
        let inFlight = Task.detached { () -> RawClient.Reply? in
            let client = try RawClient(port: port, timeout: 10)
            client.send("GET /slow?ms=800 HTTP/1.1\r\nHost: x\r\n\r\n")
            return await client.readResponse()
        }
        try await Task.sleep(nanoseconds: 200_000_000)
        let start = Date()
        await server.shutdown(grace: 5)
        let reply = try await inFlight.value
        #expect(reply?.status == 200)
        #expect(reply?.header("Connection") == "close")
        #expect(await idle.readsEOF())
        #expect(Date().timeIntervalSince(start) < 3)
        #expect(throws: (any Error).self) { try RawClient(port: port) }
    }

    /// Found by the sanitizer runs: a handler still running when the grace ran out came back to a
    /// connection that shutdown had closed, and read its server after the server was released
    /// ("Attempted to read an unowned reference"), which killed the process.
    @Test func aHandlerThatOutlivesItsReleasedServerEndsQuietly() async throws {
        weak var released: HTTPServer?
        let client: RawClient
        do {
            let server = try TestServer.start()
            released = server
            client = try RawClient(port: server.port, timeout: 5)
            client.send("GET /slow?ms=700 HTTP/1.1\r\nHost: x\r\n\r\n")
            try await Task.sleep(nanoseconds: 200_000_000)
            await server.shutdown(grace: 0)
        }
        #expect(released == nil, "the server is gone while its handler still runs")
        // The handler returns at 700 ms; its answer must be dropped, not written through a freed server.
        try await Task.sleep(nanoseconds: 1_000_000_000)
        #expect(await client.readsEOF(), "the connection was closed at shutdown, with no late response")
    }
}
