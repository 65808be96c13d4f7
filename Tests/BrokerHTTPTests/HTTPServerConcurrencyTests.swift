import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerHTTP

/// Handlers that wait never hold up other connections; shutdown drains in-flight work.
@Suite struct HTTPServerConcurrencyTests {
    @Test func aSlowHandlerDoesNotDelayAHundredOthers() async throws {
        let entered = TestEvent(), release = TestEvent(), slowAnswered = TestEvent()
        try await TestServer.with(slowEntered: entered, slowRelease: release) { server in
            let port = server.port
            let slow = Task.detached { () -> Int? in
                let client = try RawClient(port: port, timeout: 600)
                client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
                let status = await client.readResponse()?.status
                slowAnswered.signal()
                return status
            }
            #expect(await entered.wait(), "the slow request reached its handler")
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
            #expect(statuses.count == 100)
            #expect(statuses.allSatisfy { $0 == 200 })
            // Had the slow handler held a worker, the requests queued behind it could not have been answered
            // while it still waits for its release.
            #expect(slowAnswered.count == 0, "the 100 quick requests finished while the slow one still waited")
            release.signal()
            #expect(try await slow.value == 200)
        }
    }

    @Test func aRequestSentWhileTheLastOneWaitsIsReadAndAnsweredAfterIt() async throws {
        let entered = TestEvent(), release = TestEvent()
        try await TestServer.with(slowEntered: entered, slowRelease: release) { server in
            let client = try RawClient(port: server.port, timeout: 600)
            client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await entered.wait(), "the first request reached its handler")
            // Comes while reading is paused for the waiting handler (the socket still in the epoll set for input):
            // the server stops hearing of it until the first answer is out, then reads it.
            client.send("GET /query?q=next HTTP/1.1\r\nHost: x\r\n\r\n")
            // Meanwhile both workers (new connections go to them in turn) answer others.
            for _ in 0..<2 {
                let other = try RawClient(port: server.port)
                other.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(await other.readResponse()?.status == 200)
            }
            release.signal()
            #expect(await client.readResponse()?.status == 200)
            #expect(await client.readResponse()?.text == "\"next\"")
        }
    }

    /// The grace is an hour: shutdown returns because the in-flight request ended, or the time limit fails the test.
    @Test(.timeLimit(.minutes(2))) func shutdownLetsAnInFlightRequestFinishAndClosesIdleOnes() async throws {
        let entered = TestEvent(), release = TestEvent()
        let server = try TestServer.start(slowEntered: entered, slowRelease: release)
        let port = server.port
        let idle = try RawClient(port: port)
        idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await idle.readResponse()?.status == 200)
        let inFlight = Task.detached { () -> RawClient.Reply? in
            let client = try RawClient(port: port, timeout: 600)
            client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            return await client.readResponse()
        }
        #expect(await entered.wait(), "the request is in flight")
        let stopping = Task { await server.shutdown(grace: 3600) }
        // The handler answers only once shutdown has begun.
        #expect(await BrokerTestSupport.eventually { server.isDraining })
        release.signal()
        await stopping.value
        let reply = try await inFlight.value
        #expect(reply?.status == 200)
        #expect(reply?.header("Connection") == "close")
        #expect(await idle.readsEOF())
        #expect(throws: (any Error).self) { try RawClient(port: port) }
    }

    /// Found by the sanitizer runs: a handler still running when shutdown's grace ran out came back to
    /// the connection shutdown had closed and answered on it, reading a server the caller had released
    /// ("Attempted to read an unowned reference" killed the process).
    @Test func aHandlerThatOutlivesShutdownLeavesItsClosedConnectionAlone() async throws {
        weak var released: HTTPServer?
        let client: RawClient
        let entered = TestEvent(), release = TestEvent()
        do {
            let server = try TestServer.start(slowEntered: entered, slowRelease: release)
            released = server
            client = try RawClient(port: server.port)
            client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await entered.wait())
            await server.shutdown(grace: 0)
        }
        #expect(await client.readsEOF(), "shutdown closed the connection without an answer")
        // New sockets take the lowest free descriptors, the closed connection's among them.
        var pairs: [[Int32]] = []
        for _ in 0..<8 {
            var pair: [Int32] = [-1, -1]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
            pairs.append(pair)
        }
        defer { for fd in pairs.joined() { close(fd) } }
        // The handler returns once released, after shutdown; its answer is dropped and then nothing holds the server.
        release.signal()
        #expect(await Self.eventually { released == nil }, "the server outlived its handler")
        var byte: UInt8 = 0
        let stray = pairs.joined().filter { recv($0, &byte, 1, Int32(MSG_DONTWAIT)) > 0 }
        #expect(stray.isEmpty, "the late answer went to a descriptor the closed connection had used")
    }

    /// Found by the sanitizer runs: a fake provider released without a shutdown while its slow handler
    /// slept; the answer then read the released server and killed the test process.
    @Test func aServerReleasedWithoutShutdownStillAnswersTheRequestInFlight() async throws {
        weak var released: HTTPServer?
        let client: RawClient
        let entered = TestEvent(), release = TestEvent()
        do {
            let server = try TestServer.start(slowEntered: entered, slowRelease: release)
            released = server
            client = try RawClient(port: server.port)
            client.send("GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(await entered.wait())
        }
        // The handler answers only now, with nothing but its request holding the server.
        release.signal()
        #expect(await client.readResponse()?.status == 200)
        #expect(await client.readsEOF())
        client.shutdownWrite()
        #expect(await Self.eventually { released == nil }, "the server outlived its last connection")
    }

    /// Whether `condition` comes to hold (bounded by ``BrokerTestSupport/eventually(timeout:interval:_:)``'s minute).
    static func eventually(_ condition: () -> Bool) async -> Bool {
        await BrokerTestSupport.eventually { condition() }
    }
}
