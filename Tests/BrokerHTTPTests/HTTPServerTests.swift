import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerHTTP

/// Live behaviour over real sockets: keep-alive, pipelining, routing and response fields.
@Suite struct HTTPServerTests {
    @Test func servesHealthzWithDateLengthAndType() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            let reply = try #require(await client.readResponse())
            #expect(reply.status == 200)
            #expect(reply.text == "{\"status\":\"ok\"}")
            #expect(reply.header("Content-Length") == "15")
            #expect(reply.header("Content-Type") == "application/json")
            #expect(reply.header("Date")?.hasSuffix("GMT") == true)
            #expect(reply.header("Connection") == nil)
        }
    }

    @Test func fieldsWrittenOutOnceAreSentAsListedAndAnAnswersEditsOfThemToo() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            let listed = [("Cache-Control", "no-store"), ("Pragma", "no-cache"), ("X-Line", "a  b")]
            let cases: [(change: String, fields: [(String, String)])] = [
                ("", listed), ("add", listed + [("X-Added", "yes")]),
                ("replace", [("Cache-Control", "no-store"), ("X-Line", "a  b"), ("Pragma", "again")]),
                ("remove", [("Cache-Control", "no-store"), ("X-Line", "a  b")]),
                // An edit changed its answer's copy only: the shared list goes out as before.
                ("", listed),
            ]
            let names: Set = ["Cache-Control", "Pragma", "X-Line", "X-Added"]
            for (change, fields) in cases {
                client.send("GET /fixed?change=\(change) HTTP/1.1\r\nHost: x\r\n\r\n")
                let reply = try #require(await client.readResponse())
                let sent = reply.headers.filter { names.contains($0.0) }
                #expect(sent.map(\.0) == fields.map(\.0) && sent.map(\.1) == fields.map(\.1), "\(change)")
                #expect(reply.status == 200 && reply.text == "fixed" && reply.header("Content-Length") == "5")
            }
        }
    }

    @Test func keepsHTTP11ConnectionsOpenAcrossRequests() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            for _ in 0..<5 {
                client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(await client.readResponse()?.status == 200)
            }
            #expect(server.metricsSnapshot().acceptedConnections == 1)
        }
    }

    @Test func closesHTTP10UnlessKeepAliveAsked() async throws {
        try await TestServer.with { server in
            let plain = try RawClient(port: server.port)
            plain.send("GET /healthz HTTP/1.0\r\n\r\n")
            #expect(await plain.readResponse()?.header("Connection") == "close")
            #expect(await plain.readsEOF())

            let keep = try RawClient(port: server.port)
            keep.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(await keep.readResponse()?.header("Connection") == "keep-alive")
            keep.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(await keep.readResponse()?.status == 200)
        }
    }

    @Test func connectionCloseIsHonoured() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(await client.readResponse()?.header("Connection") == "close")
            #expect(await client.readsEOF())
        }
    }

    @Test func answersPipelinedRequestsInOrder() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            client.send(
                "GET /query?q=one HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
                    + "GET /slow?ms=50 HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /query?q=two+%26+three HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await client.readResponse()?.text == "\"one\"")
            #expect(await client.readResponse()?.text == "hello")
            #expect(await client.readResponse()?.text == "{\"slept_ms\":50}")
            #expect(await client.readResponse()?.text == "\"two & three\"")
        }
    }

    @Test func aFastPathAnswersInlineAndFallsBackToItsTaskInOrder() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            client.send(
                "GET /maybe?fast=0 HTTP/1.1\r\nHost: x\r\n\r\nGET /maybe?fast=1 HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /maybe?fast=0 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await client.readResponse()?.text == "\"slow\"")
            #expect(await client.readResponse()?.text == "\"fast\"")
            #expect(await client.readResponse()?.text == "\"slow\"")
        }
    }

    @Test func neverParsesABodyAsARequest() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            let smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
            client.send(
                "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: \(smuggled.utf8.count)\r\n\r\n\(smuggled)"
                    + "GET /query?q=after HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await client.readResponse()?.status == 200)
            #expect(await client.readResponse()?.text == "\"after\"")
        }
    }

    @Test func headGetsGetHeadersWithoutBody() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            client.send("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            let reply = try #require(await client.readResponse(head: true))
            #expect(reply.status == 200)
            #expect(reply.header("Content-Length") == "15")
            client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await client.readResponse()?.text == "{\"status\":\"ok\"}")
        }
    }

    @Test func unknownPathIs404AndWrongMethodIs405WithAllowInTheRoutersShape() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            client.send("GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
            let missing = try #require(await client.readResponse())
            #expect(missing.status == 404)
            #expect(missing.text == "not_found: No such endpoint.")
            client.send("DELETE /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            let wrong = try #require(await client.readResponse())
            #expect(wrong.status == 405)
            #expect(wrong.header("Allow") == "GET, HEAD")
            #expect(wrong.text == "method_not_allowed: DELETE is not allowed here; use GET, HEAD.")
            client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await client.readResponse()?.status == 200)
        }
    }

    @Test func writesLargeResponsesToSlowReadersCompletely() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            client.send("GET /big?size=4000000 HTTP/1.1\r\nHost: x\r\n\r\n")
            try await Task.sleep(nanoseconds: 200_000_000)
            let reply = try #require(await client.readResponse())
            #expect(reply.body.count == 4_000_000)
            client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await client.readResponse()?.status == 200)
        }
    }

    @Test func countsRequestsByRouteAndOpenConnections() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = await client.readResponse()
            _ = await client.readResponse()
            let snapshot = server.metricsSnapshot()
            let healthz = try #require(snapshot.routes.firstIndex(of: "/healthz"))
            #expect(snapshot.requests[healthz][1] == 1)
            #expect(snapshot.requests[snapshot.routes.count - 1][3] == 1)
            #expect(snapshot.openConnections == 1)
            #expect(snapshot.latencyCounts.joined().reduce(0, +) == 2)
            // One histogram per route: the probe and the 404 are observed apart.
            #expect(snapshot.latencyCounts[healthz].reduce(0, +) == 1)
            #expect(snapshot.latencyCounts[snapshot.routes.count - 1].reduce(0, +) == 1)
            #expect(snapshot.latencySum.count == snapshot.routes.count)
        }
    }

    @Test func bindsIPv6Loopback() async throws {
        let server = try TestServer.start { $0.host = "::1" }
        #expect(server.port > 0)
        await server.shutdown(grace: 1)
    }

    /// An in-process restart on the same port (a test's receiver going down and up, a reload) binds at once: the
    /// listener is closed when `shutdown` returns, not later on the accept queue.
    @Test func shutdownFreesThePortBeforeItReturns() async throws {
        // Below the ephemeral range: another test's outgoing connection cannot be given this port between two binds.
        let port = try Loopback.freePortOutsideEphemeralRange()
        var server = try TestServer.start { $0.port = port }
        for _ in 0..<50 {
            await server.shutdown(grace: 0)
            server = try TestServer.start { $0.port = port }
            #expect(server.port == port)
        }
        await server.shutdown(grace: 0)
    }
}
