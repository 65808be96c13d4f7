import BrokerCore
import Foundation
import Glibc
import Testing

/// The real outbound client against real local sockets: what it sends, and that it follows no redirect and keeps no cookie.
struct URLSessionUpstreamClientTests {
    @Test func sendsMethodHeadersAndBodyAndReturnsTheAnswer() async throws {
        let server = try LocalHTTPServer { _ in
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain;charset=UTF-8\r\nContent-Length: 20\r\nConnection: close\r\n\r\n{\"error\":\"invalid\"}\n"
        }
        defer { server.stop() }
        let request = UpstreamRequest(method: "POST", url: server.url("/oauth2/access_token"),
                                      headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                                      body: Array("grant_type=authorization_code&code=abc".utf8))
        let response = try await URLSessionUpstreamClient(timeout: 5).send(request)
        #expect(response.status == 400)
        #expect(response.header("content-type") == "text/plain;charset=UTF-8")
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"error\":\"invalid\"}\n")
        let seen = try #require(server.requests.first)
        #expect(seen.hasPrefix("POST /oauth2/access_token HTTP/1.1\r\n"))
        #expect(seen.lowercased().contains("accept: application/json"))
        #expect(seen.hasSuffix("\r\n\r\ngrant_type=authorization_code&code=abc"))
    }

    @Test func twelveCallsToOneSlowHostAreInFlightAtOnce() async throws {
        // The server never answers, so every call that reaches it holds its connection.
        let server = try LocalHTTPServer { _ in nil }
        defer { server.stop() }
        let client = URLSessionUpstreamClient(timeout: 10)
        let calls = Task {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<12 {
                    group.addTask { _ = try? await client.send(UpstreamRequest(method: "GET", url: server.url("/slow/\(index)"))) }
                }
            }
        }
        // FoundationNetworking's default of 6 connections per host would hold the other 6 back.
        for _ in 0..<500 where server.requests.count < 12 { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(server.requests.count == 12)
        calls.cancel()
        await calls.value
    }

    @Test func redirectIsReturnedNotFollowed() async throws {
        let server = try LocalHTTPServer { _ in
            "HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        }
        defer { server.stop() }
        let response = try await URLSessionUpstreamClient(timeout: 5).send(UpstreamRequest(method: "GET", url: server.url("/user")))
        #expect(response.status == 302)
        #expect(server.requests.count == 1)
    }

    @Test func cookiesAreNeitherKeptNorSent() async throws {
        let server = try LocalHTTPServer { _ in
            "HTTP/1.1 200 OK\r\nSet-Cookie: session=tracking; Path=/\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        }
        defer { server.stop() }
        let client = URLSessionUpstreamClient(timeout: 5)
        _ = try await client.send(UpstreamRequest(method: "GET", url: server.url("/a")))
        _ = try await client.send(UpstreamRequest(method: "GET", url: server.url("/b")))
        #expect(server.requests.count == 2)
        #expect(!server.requests[1].lowercased().contains("cookie:"))
    }

    @Test func stalledProviderTimesOut() async throws {
        let server = try LocalHTTPServer { _ in nil }
        defer { server.stop() }
        await #expect(throws: UpstreamError.timeout) {
            try await URLSessionUpstreamClient(timeout: 0.5).send(UpstreamRequest(method: "POST", url: server.url("/token")))
        }
    }

    @Test func answerWithinAFractionalTimeoutArrives() async throws {
        // FoundationNetworking alone would round 0.9 s down to 0 and fail at once.
        let server = try LocalHTTPServer { _ in
            Thread.sleep(forTimeInterval: 0.1)
            return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        }
        defer { server.stop() }
        let response = try await URLSessionUpstreamClient(timeout: 0.9).send(UpstreamRequest(method: "GET", url: server.url("/user")))
        #expect(response.status == 200)
    }

    @Test func closedPortIsConnectionRefused() async throws {
        let server = try LocalHTTPServer { _ in nil }
        let url = server.url("/token?client_secret=SENTINEL")
        server.stop()
        do {
            _ = try await URLSessionUpstreamClient(timeout: 5).send(UpstreamRequest(method: "POST", url: url))
            Issue.record("expected a transport error")
        } catch {
            #expect(error == .transport("connection refused"))
            #expect(!error.description.contains("SENTINEL"))
        }
    }

    @Test(arguments: ["not a url", "file:///etc/passwd", "ftp://example.com/x"])
    func nonHTTPURLIsRefusedBeforeAnyIO(url: String) async {
        await #expect(throws: UpstreamError.transport("invalid URL")) {
            try await URLSessionUpstreamClient().send(UpstreamRequest(method: "GET", url: url))
        }
    }
}
