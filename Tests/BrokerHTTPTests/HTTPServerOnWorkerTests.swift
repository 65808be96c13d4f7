import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerHTTP

/// Routes whose handlers run on their connection's worker (`onWorker`), calling an upstream through an ``HTTPClient``
/// on the same workers, as `/proxy` does: real sockets both ways.
struct HTTPServerOnWorkerTests {
    static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"

    /// A server and a client on one group of two workers; `/relay` (on its worker) calls `upstream` and answers with
    /// the upstream's body and whether the handler ran on one of the group's workers; `/replay` gives up one upstream
    /// answer and asks again on the same connection before answering with the second; `/silent` (on its worker) calls
    /// `silent`, when given, with a one-second deadline.
    static func start(upstream: FakeUpstream, silent: FakeUpstream? = nil) throws -> (HTTPServer, HTTPClient) {
        let loops = HTTPEventLoops(count: 2)
        let client = HTTPClient(
            configuration: HTTPClient.Configuration(maxConnectionsPerHost: 1, idleTimeout: 60), eventLoops: loops)
        var router = Router()
        let relay: @Sendable (Request) async -> Response = { request in
            let where_ = HTTPWorker.current(among: loops.workers) == nil ? "pool" : "worker"
            // A POST goes on as a POST with a body: a call that may not be sent twice.
            let method = request.method.rawValue
            let body: [UInt8] = request.method == .POST ? Array("x".utf8) : []
            do throws(HTTPClientError) {
                let (_, body) = try await client.execute(
                    HTTPClientRequest(method: method, url: upstream.url("/a"), body: .bytes(body)), timeout: 60,
                    maxBodyBytes: 1024)
                return Response(status: .ok, body: Array("\(where_) ".utf8) + body)
            } catch {
                return Response(status: .badGateway, body: Array("\(error)".utf8))
            }
        }
        let replay: @Sendable (Request) async -> Response = { _ in
            do throws(HTTPClientError) {
                let request = HTTPClientRequest(method: "POST", url: upstream.url("/b"), body: .bytes(Array("x".utf8)))
                let first = try await client.stream(request, timeout: 60)
                // The answer is given up (a 401 before a replay does this); the next call takes the same connection.
                first.body.cancel()
                let second = try await client.stream(request, timeout: 60)
                var body: [UInt8] = []
                for try await piece in second.body { body += piece }
                return Response(status: .ok, body: body)
            } catch {
                return Response(status: .badGateway, body: Array("\(error)".utf8))
            }
        }
        let waits: @Sendable (Request) async -> Response = { _ in
            guard let silent else { return Response(status: .notFound) }
            do throws(HTTPClientError) {
                let (_, body) = try await client.execute(
                    HTTPClientRequest(method: "GET", url: silent.url("/never")), timeout: 1, maxBodyBytes: 1024)
                return Response(status: .ok, body: body)
            } catch {
                return Response(status: .badGateway, body: Array("\(error)".utf8))
            }
        }
        router.add(.GET, "/relay", .async(relay), onWorker: true)
        router.add(.POST, "/relay", .async(relay), onWorker: true)
        router.add(.GET, "/silent", .async(waits), onWorker: true)
        router.add(.GET, "/pooled", .async(relay))
        router.add(.GET, "/replay", .async(replay), onWorker: true)
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), router: router, eventLoops: loops)
        try server.start()
        return (server, client)
    }

    @Test func aHandlerOnItsWorkerRelaysTheUpstreamAnswerOverOneKeptConnection() async throws {
        let upstream = try FakeUpstream { _, _ in .reply(Self.ok) }
        defer { upstream.stop() }
        let (server, _) = try Self.start(upstream: upstream)
        for _ in 0..<10 {
            let reply = await TestHTTP.send(port: server.port, target: "/relay")
            #expect(reply?.status == 200 && reply?.body == "worker hello")
        }
        // A route without `onWorker` runs on the global pool, and its calls use the same pool of connections.
        let pooled = await TestHTTP.send(port: server.port, target: "/pooled")
        #expect(pooled?.status == 200 && pooled?.body == "pool hello")
        #expect(upstream.accepted == 1)
        await server.shutdown(grace: 1)
    }

    @Test func anAnswerGivenUpDoesNotCancelTheNextCallOnItsConnection() async throws {
        let upstream = try FakeUpstream { _, _ in .reply(Self.ok) }
        defer { upstream.stop() }
        let (server, _) = try Self.start(upstream: upstream)
        for _ in 0..<20 {
            let reply = await TestHTTP.send(port: server.port, target: "/replay")
            #expect(reply?.status == 200 && reply?.body == "hello", "\(String(describing: reply?.body))")
        }
        #expect(upstream.accepted == 1)
        await server.shutdown(grace: 1)
    }

    @Test func aProviderThatClosedAKeptConnectionGetsTheNextCallOnANewOne() async throws {
        // The provider answers as if it kept the connection, then closes it: the next call, a POST that may not be sent
        // twice, finds it closed before any of it goes out (heard through epoll, or checked on the worker before
        // sending) and goes out on a new connection, not as a 502.
        let upstream = try FakeUpstream { _, _ in .reply(Self.ok, close: true) }
        defer { upstream.stop() }
        let (server, _) = try Self.start(upstream: upstream)
        for round in 1...3 {
            let reply = await TestHTTP.send(port: server.port, method: "POST", target: "/relay")
            #expect(reply?.status == 200 && reply?.body == "worker hello", "\(String(describing: reply?.body))")
            #expect(await eventually { upstream.ended == round })
        }
        #expect(upstream.accepted == 3)
        await server.shutdown(grace: 1)
    }

    @Test func aCallWaitingOnASilentProviderHoldsUpNoOtherAndEndsAtItsDeadline() async throws {
        let upstream = try FakeUpstream { _, _ in .reply(Self.ok) }
        defer { upstream.stop() }
        let silent = try FakeUpstream { _, _ in .hold }
        defer { silent.stop() }
        let (server, _) = try Self.start(upstream: upstream, silent: silent)
        async let held = TestHTTP.send(port: server.port, target: "/silent")
        #expect(await eventually { silent.requests.count == 1 })
        // New connections go to both workers in turn, so one of these shares the waiting call's worker.
        for _ in 0..<4 {
            let reply = await TestHTTP.send(port: server.port, target: "/relay")
            #expect(reply?.status == 200 && reply?.body == "worker hello")
        }
        let reply = await held
        #expect(reply?.status == 502 && reply?.body == "deadline", "\(String(describing: reply?.body))")
        await server.shutdown(grace: 1)
    }

    @Test func aRouteOffTheWorkerStaysOffItWhenItsRequestFollowsOneOnTheWorker() async throws {
        // Pipelined: the second request is parsed when the first one's answer goes out, from inside the first one's
        // task on the worker; its own task still runs on the shared pool, as its route asks.
        let upstream = try FakeUpstream { _, _ in .reply(Self.ok) }
        defer { upstream.stop() }
        let (server, _) = try Self.start(upstream: upstream)
        let client = try RawClient(port: server.port)
        client.send("GET /relay HTTP/1.1\r\nHost: x\r\n\r\nGET /pooled HTTP/1.1\r\nHost: x\r\n\r\nGET /relay HTTP/1.1\r\nHost: x\r\n\r\n")
        let first = await client.readResponse()
        let second = await client.readResponse()
        let third = await client.readResponse()
        #expect(first?.text == "worker hello" && second?.text == "pool hello" && third?.text == "worker hello")
        await server.shutdown(grace: 1)
    }
}
