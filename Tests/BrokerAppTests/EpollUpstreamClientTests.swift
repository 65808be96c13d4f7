import BrokerApp
import BrokerCore
import BrokerHTTP
import BrokerTestSupport
import BrokerURLSession
import Foundation
import Glibc
import Testing

/// The native outbound client behind the ``UpstreamClient`` seam: the same answers and errors the broker expects of URLSession's.
struct EpollUpstreamClientTests {
    @Test func sendsMethodHeadersAndBodyAndReturnsTheAnswer() async throws {
        let server = try LocalHTTPServer { _ in
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain;charset=UTF-8\r\nContent-Length: 20\r\nConnection: close\r\n\r\n{\"error\":\"invalid\"}\n"
        }
        defer { server.stop() }
        let request = UpstreamRequest(
            method: "POST", url: server.url("/oauth2/access_token"),
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
            body: Array("grant_type=authorization_code&code=abc".utf8))
        let response = try await EpollUpstreamClient(timeout: 60).send(request)
        #expect(response.status == 400)
        #expect(response.header("content-type") == "text/plain;charset=UTF-8")
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"error\":\"invalid\"}\n")
        let seen = try #require(server.requests.first)
        #expect(seen.hasPrefix("POST /oauth2/access_token HTTP/1.1\r\n"))
        #expect(seen.lowercased().contains("accept: application/json"))
        #expect(seen.lowercased().contains("\r\naccept-encoding: identity\r\n"))
        #expect(seen.hasSuffix("\r\n\r\ngrant_type=authorization_code&code=abc"))
    }

    @Test func aRequestForPublicAddressesOnlyNeverReachesLoopback() async throws {
        let server = try LocalHTTPServer { _ in "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}" }
        defer { server.stop() }
        var request = UpstreamRequest(method: "GET", url: server.url("/.well-known/oauth-protected-resource"))
        request.publicAddressesOnly = true
        await #expect {
            _ = try await EpollUpstreamClient(timeout: 60).send(request)
        } throws: { error in
            guard case .transport(let cause, _) = error as? UpstreamError else { return false }
            return cause == .addressRefused
        }
        #expect(server.requests.isEmpty)
        request.publicAddressesOnly = false
        #expect(try await EpollUpstreamClient(timeout: 60).send(request).status == 200)
    }

    @Test func callsToAServerThatClosesAfterEachAnswerAllArrive() async throws {
        // LocalHTTPServer answers once per connection and closes without saying so: a pooled connection goes stale.
        let server = try LocalHTTPServer { _ in "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}" }
        defer { server.stop() }
        let client = EpollUpstreamClient(timeout: 60, client: HTTPClient())
        for index in 0..<5 {
            let response = try await client.send(UpstreamRequest(method: "GET", url: server.url("/\(index)")))
            #expect(response.status == 200)
        }
        #expect(server.requests.count == 5)
    }

    @Test func stalledProviderTimesOut() async throws {
        let server = try LocalHTTPServer { _ in nil }
        defer { server.stop() }
        await #expect(throws: UpstreamError.timeout) {
            try await EpollUpstreamClient(timeout: 0.5).send(UpstreamRequest(method: "POST", url: server.url("/token")))
        }
    }

    @Test func closedPortIsConnectionRefused() async throws {
        try await Loopback.withRefusingPort { port in
            do {
                _ = try await EpollUpstreamClient(timeout: 60).send(
                    UpstreamRequest(method: "POST", url: "http://127.0.0.1:\(port)/token?client_secret=SENTINEL"))
                Issue.record("expected a transport error")
            } catch let error as UpstreamError {
                #expect(error == .transport(.connectRefused, "connection refused"))
                #expect(!error.description.contains("SENTINEL"))
            }
        }
    }

    @Test(arguments: ["not a url", "file:///etc/passwd", "ftp://example.com/x", "http://", "https:///token"])
    func nonHTTPURLIsRefusedBeforeAnyIO(url: String) async {
        await #expect(throws: UpstreamError.transport(.invalidRequest, "invalid URL")) {
            try await EpollUpstreamClient().send(UpstreamRequest(method: "GET", url: url))
        }
    }

    @Test(arguments: [false, true])
    func answerExactlyAtTheCapIsAcceptedAndOneByteMoreIsNot(chunked: Bool) async throws {
        for (size, accepted) in [(4096, true), (4097, false)] {
            let piece = [UInt8](repeating: UInt8(ascii: "b"), count: size)
            let head = chunked ? "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked" : "HTTP/1.1 200 OK\r\nContent-Length: \(size)"
            let server = try StreamingHTTPServer(head: head, piece: piece, count: 1, chunked: chunked)
            defer { server.stop() }
            let client = EpollUpstreamClient(timeout: 60, maxResponseBytes: 4096)
            if accepted {
                let response = try await client.send(UpstreamRequest(method: "GET", url: server.url("/user")))
                #expect(response.body == piece)
            } else {
                await #expect(throws: UpstreamError.tooLarge(limit: 4096)) {
                    try await client.send(UpstreamRequest(method: "GET", url: server.url("/user")))
                }
            }
        }
    }

    @Test(arguments: [false, true])
    func sixtyFourMiBAnswerIsCutAtTheCapAndTheServerSeesTheClientLeave(chunked: Bool) async throws {
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 64 << 10)
        let head = chunked ? "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked" : "HTTP/1.1 200 OK\r\nContent-Length: \(64 << 20)"
        let server = try StreamingHTTPServer(head: head, piece: piece, count: 1024, chunked: chunked)
        defer { server.stop() }
        await #expect(throws: UpstreamError.tooLarge(limit: 1 << 20)) {
            try await EpollUpstreamClient(timeout: 30, maxResponseBytes: 1 << 20).send(
                UpstreamRequest(method: "GET", url: server.url("/user")))
        }
        let outcome = await server.finished()
        #expect(outcome.clientHungUp && outcome.bodyBytesWritten < 64 << 20)
    }

    @Test func gzipLabelledAnswerIsRefusedNotInflated() async throws {
        let bomb = GzipBomb.make(zeroBytes: 16 << 20)
        let server = try StreamingHTTPServer(
            head: "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(bomb.count)", piece: bomb, count: 1)
        defer { server.stop() }
        await #expect(throws: UpstreamError.transport(.badResponse, "content-encoded answer refused")) {
            try await EpollUpstreamClient(timeout: 60, maxResponseBytes: 256 << 10).send(
                UpstreamRequest(method: "GET", url: server.url("/user")))
        }
    }

    @Test func aLongWebhookAnswerIsCutNotRefusedWhenTruncating() async throws {
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 64 << 10)
        let server = try StreamingHTTPServer(head: "HTTP/1.1 202 Accepted\r\nContent-Length: \(1 << 20)", piece: piece, count: 16)
        defer { server.stop() }
        let response = try await EpollUpstreamClient(timeout: 60, maxResponseBytes: 1000, truncatesLongAnswers: true).send(
            UpstreamRequest(method: "POST", url: server.url("/hook")))
        #expect(response.status == 202 && response.body.count == 1000)
    }

    @Test(arguments: ["HTTP/1.1 abc Whatever\r\nContent-Length: 0\r\n\r\n", "hello\r\n\r\n"])
    func malformedStatusLineIsAMalformedResponse(answer: String) async throws {
        let server = try LocalHTTPServer { _ in answer }
        defer { server.stop() }
        do {
            _ = try await EpollUpstreamClient(timeout: 60).send(UpstreamRequest(method: "POST", url: server.url("/token?code=SENTINEL")))
            Issue.record("expected a transport error")
        } catch {
            #expect(error == .transport(.badResponse, "malformed HTTP response"))
            #expect(!error.description.contains("SENTINEL"))
        }
    }

    @Test func theNativeFactoryMakesTheBrokersOwnClient() async throws {
        let server = try LocalHTTPServer { _ in "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n" }
        defer { server.stop() }
        let native = UpstreamClientFactory.native.make(timeout: 60)
        let response = try await native.send(UpstreamRequest(method: "GET", url: server.url("/a")))
        #expect(response.status == 200)
        #expect(native is EpollUpstreamClient)
        #expect(UpstreamClientFactory.urlSession.make(timeout: 5) is URLSessionUpstreamClient)
    }
}
