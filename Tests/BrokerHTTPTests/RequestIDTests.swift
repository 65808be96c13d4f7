import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerHTTP

/// `X-Request-Id`: a client's own id is echoed when acceptable, anything else replaced by a generated one; handlers
/// and the observer see the same id.
@Suite(.scoped) struct RequestIDTests {
    /// Keeps each completed request's id.
    final class IDs: HTTPServerObserver {
        let ids = Mutex<[String?]>([])
        func requestCompleted(method: String, path: String, status: Int, seconds: Double) {}
        func requestCompleted(_ completed: CompletedRequest) { ids.withLock { $0.append(completed.requestID) } }
        func serverEvent(level: String, message: String) {}
    }

    @Test func echoesAnAcceptableClientIDAndTellsTheObserver() async throws {
        let ids = IDs()
        try await TestServer.with(observer: ids) { server in
            let client = try RawClient(port: server.port)
            client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: trace 42/abc\r\n\r\n")
            let reply = try #require(await client.readResponse())
            #expect(reply.header("X-Request-Id") == "trace 42/abc")
            client.send("GET /slow?ms=1 HTTP/1.1\r\nHost: x\r\nx-request-id: async-one\r\n\r\n")
            #expect(try #require(await client.readResponse()).header("X-Request-Id") == "async-one")
        }
        #expect(ids.ids.withLock { $0 } == ["trace 42/abc", "async-one"])
    }

    @Test func generatesDistinctIDsWhenNoneOrABadOneIsSent() async throws {
        try await TestServer.with { server in
            let client = try RawClient(port: server.port)
            var seen: Set<String> = []
            let tooLong = String(repeating: "a", count: RequestID.maximumBytes + 1)
            for sent in ["", "X-Request-Id: \(tooLong)\r\n", "X-Request-Id: caf\u{e9}\r\n", "X-Request-Id:\r\n"] {
                client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\(sent)\r\n")
                let reply = try #require(await client.readResponse())
                let id = try #require(reply.header("X-Request-Id"))
                #expect(RequestID.isAcceptable(id) && id != tooLong && !id.isEmpty)
                seen.insert(id)
            }
            #expect(seen.count == 4)
        }
    }

    @Test func acceptsUpTo128PrintableBytes() {
        #expect(RequestID.isAcceptable(String(repeating: "z", count: 128)))
        #expect(!RequestID.isAcceptable(String(repeating: "z", count: 129)))
        #expect(!RequestID.isAcceptable(""))
        #expect(!RequestID.isAcceptable("tab\there"))
        #expect(RequestID.resolve("ok-1") == "ok-1")
        #expect(RequestID.resolve(nil) != RequestID.resolve(nil))
    }

    @Test func asyncHandlersSeeTheirIDAsTheTaskLocal() async throws {
        var router = Router()
        router.add(.GET, "/id", .async({ _ in Response.json(.ok, JSONString.quote(RequestID.current ?? "none")) }))
        let reply = await router.respond(to: .make(.GET, "/id", headers: [("X-Request-Id", "local-7")]))
        #expect(String(decoding: reply.body, as: UTF8.self) == "\"local-7\"")
    }
}
