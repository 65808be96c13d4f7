import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerHTTP

/// Limits and framing errors over real sockets: status, `Connection: close`, then a real close.
@Suite struct HTTPServerLimitsTests {
    @Test func rejectsHugeContentLengthBeforeReadingTheBody() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\n")
            let reply = try #require(await client.readResponse())
            #expect(reply.status == 413)
            #expect(reply.header("Connection") == "close")
            #expect(reply.text.hasPrefix("payload_too_large: "))
            #expect(await client.readsEOF())
        }
    }

    @Test func oversizedHeaderSentInPiecesGets431() async throws {
        // A header deadline far beyond the drip's length, so a loaded machine's slow wake-ups cannot turn the 431 into a 408.
        try await TestServer.with({ $0.headerTimeout = 120 }) { server in
            let client = try RawClient(port: server.port)
            client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
            var answered: RawClient.Reply?
            for _ in 0..<100 {
                client.send([UInt8](repeating: UInt8(ascii: "a"), count: 1024))
                try await Task.sleep(nanoseconds: 2_000_000)
            }
            client.send("\r\n\r\n")
            answered = await client.readResponse()
            #expect(answered?.status == 431)
            #expect(answered?.header("Connection") == "close")
            #expect(await client.readsEOF())
        }
    }

    @Test func longTargetGets414AndTooManyHeadersGet431() async throws {
        try await TestServer.with { server in
            let long = try RawClient(port: server.port)
            long.send("GET /" + String(repeating: "a", count: 100_000) + " HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await long.readResponse()?.status == 414)

            let many = try RawClient(port: server.port)
            var request = "GET /healthz HTTP/1.1\r\nHost: x\r\n"
            for i in 0..<3000 { request += "X-\(i): v\r\n" }
            many.send(request + "\r\n")
            #expect(await many.readResponse()?.status == 431)
        }
    }

    @Test func smuggledRequestAfterCLTEGetsExactlyOneResponse() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            client.send(
                "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                    + "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
            let reply = try #require(await client.readResponse())
            #expect(reply.status == 400)
            #expect(reply.header("Connection") == "close")
            #expect(await client.readsEOF())
            #expect(client.unread.isEmpty)
        }
    }

    @Test(arguments: [
        ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ("BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 501),
        ("GET /healthz HTTP/1.1\r\n\r\n", 400),
        ("GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n", 417),
    ])
    func framingErrorsAnswerAndClose(request: String, status: Int) async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            client.send(request)
            let reply = try #require(await client.readResponse())
            #expect(reply.status == status)
            #expect(reply.header("Connection") == "close")
            #expect(reply.header("Content-Type") == "text/x-refusal")
            #expect(await client.readsEOF())
        }
    }

    @Test func expectContinueGets100ThenTheAnswer() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            let interim = try #require(await client.readResponse())
            #expect(interim.status == 100)
            client.send("hello")
            #expect(await client.readResponse()?.text == "hello")
        }
    }

    @Test func expectContinueOnARefusedRequestGetsTheFinalStatusAndNo100() async throws {
        try await TestServer.with { server in
            let missing = try RawClient(port: server.port)
            missing.send("POST /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            #expect(await missing.readResponse()?.status == 404)
            #expect(await missing.readsEOF())

            let large = try RawClient(port: server.port)
            large.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\nExpect: 100-continue\r\n\r\n")
            #expect(await large.readResponse()?.status == 413)
        }
    }

    /// The status of one `GET /healthz` on `client`, nil when the connection is closed.
    private static func healthz(_ client: RawClient) async -> Int? {
        client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        return await client.readResponse()?.status
    }

    /// `count` connections, opened one after another, each answered once and then left idle.
    private static func idleConnections(_ count: Int, on server: HTTPServer) async throws -> [RawClient] {
        var idle: [RawClient] = []
        for _ in 0..<count {
            let client = try RawClient(port: server.port)
            #expect(await healthz(client) == 200)
            idle.append(client)
        }
        return idle
    }

    @Test func overTheConnectionCapIdleConnectionsMakeRoom() async throws {
        try await TestServer.with({ $0.maxConnections = 4 }) { server in
            let idle = try await Self.idleConnections(4, on: server)
            #expect(await Self.healthz(try RawClient(port: server.port)) == 200)
            // The room was made by closing the oldest idle connection; its close ends on its own
            // worker queue, which may run after the newcomer was answered.
            #expect(await idle[0].readsEOF())
            #expect(await eventually { server.openConnections <= 4 })
        }
    }

    @Test func atTheCapTheLongestWaitingConnectionMakesRoomNotTheNewer() async throws {
        // More connections than one sample of the table would see: the choice must be global.
        try await TestServer.with({ $0.maxConnections = 150 }) { server in
            let idle = try await Self.idleConnections(150, on: server)
            #expect(await Self.healthz(try RawClient(port: server.port)) == 200)
            // The oldest idle connection was closed; the younger ones still answer.
            #expect(await Self.healthz(idle[0]) == nil)
            for client in idle.dropFirst() {
                #expect(await Self.healthz(client) == 200)
            }
        }
    }

    @Test func refusalsAtTheCapAreLoggedAsACountNotALinePerConnection() async throws {
        let events = ServerEvents()
        let entered = TestEvent(), release = TestEvent()
        try await TestServer.with({ $0.maxConnections = 2 }, observer: events, slowEntered: entered, slowRelease: release) { server in
            // Both places taken by handlers at work until the test releases them: nobody waits on its client,
            // so newcomers are refused.
            defer { release.signal() }
            var busy: [RawClient] = []
            for _ in 0..<2 {
                let client = try RawClient(port: server.port)
                client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
                busy.append(client)
            }
            #expect(await entered.wait(count: 2), "both handlers at work")
            let started = Date()
            var refused = 0
            for _ in 0..<20 {
                let newcomer = try RawClient(port: server.port)
                newcomer.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                if await newcomer.readResponse()?.status == 503 { refused += 1 }
            }
            let seconds = Date().timeIntervalSince(started)
            #expect(refused == 20)
            let lines = events.messages(containing: "connection cap 2 reached")
            #expect(!lines.isEmpty)
            #expect(lines.count <= Int(seconds) + 1, "\(lines)")
            #expect(lines.first?.contains("refused 1 connection(s)") == true)
        }
    }

    /// The cap drawn from the open-file limit leaves the reserve free even when the evicted connections it ran ahead
    /// by are still closing, and grows with the limit.
    @Test(arguments: [256, 1024, 4096, 65_536, 1_048_576])
    func theConnectionCapLeavesTheReserveFreeUnderTheLimit(limit: Int) {
        let budget = DescriptorBudget(limit: limit)
        let peak = budget.connections + HTTPServerConfiguration.evictionSlack(cap: budget.connections)
        #expect(peak + budget.reserve <= limit)
        #expect(budget.reserve >= 64 + limit / 16)
        // Not needlessly low: the cap takes most of what the reserve leaves.
        #expect(Double(budget.connections) >= 0.85 * Double(limit - budget.reserve))
    }

    @Test func theUsualSoftLimitOf1024LeavesRoomForAbout800Connections() {
        #expect(DescriptorBudget(limit: 1024).connections == 796)
        #expect(DescriptorBudget(limit: 256).connections == 156)
        // Another listener's connections come out of the same descriptors.
        #expect(DescriptorBudget(limit: 1024, extraReserve: 80).connections < 796)
        // A limit too small for any reserve still lets one connection in.
        #expect(DescriptorBudget(limit: 32).connections == 1)
    }
}
