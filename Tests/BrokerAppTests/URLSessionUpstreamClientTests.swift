import BrokerApp
import BrokerCore
import BrokerTestSupport
import BrokerURLSession
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
        let request = UpstreamRequest(
            method: "POST", url: server.url("/oauth2/access_token"),
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
            body: Array("grant_type=authorization_code&code=abc".utf8))
        let response = try await URLSessionUpstreamClient(timeout: 30).send(request)
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
        let client = URLSessionUpstreamClient(timeout: 600)
        let calls = Task {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<12 {
                    group.addTask { _ = try? await client.send(UpstreamRequest(method: "GET", url: server.url("/slow/\(index)"))) }
                }
            }
        }
        // FoundationNetworking's default of 6 connections per host would hold the other 6 back.
        #expect(await eventually { server.requests.count == 12 })
        calls.cancel()
        await calls.value
    }

    @Test func redirectIsReturnedNotFollowed() async throws {
        let server = try LocalHTTPServer { _ in
            "HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        }
        defer { server.stop() }
        let response = try await URLSessionUpstreamClient(timeout: 30).send(UpstreamRequest(method: "GET", url: server.url("/user")))
        #expect(response.status == 302)
        #expect(server.requests.count == 1)
    }

    @Test func cookiesAreNeitherKeptNorSent() async throws {
        let server = try LocalHTTPServer { _ in
            "HTTP/1.1 200 OK\r\nSet-Cookie: session=tracking; Path=/\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        }
        defer { server.stop() }
        let client = URLSessionUpstreamClient(timeout: 30)
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

    @Test func aFractionalTimeoutIsWaitedOutInFull() async throws {
        // FoundationNetworking alone would round 0.9 s down to 0 and fail at once. The server never answers, so the
        // call ends by the timeout only; a loaded machine can make it later, never sooner.
        let server = try LocalHTTPServer { _ in nil }
        defer { server.stop() }
        let started = ContinuousClock.now
        await #expect(throws: UpstreamError.timeout) {
            try await URLSessionUpstreamClient(timeout: 0.9).send(UpstreamRequest(method: "GET", url: server.url("/user")))
        }
        #expect(ContinuousClock.now - started >= .milliseconds(900))
    }

    @Test func closedPortIsConnectionRefused() async throws {
        let server = try LocalHTTPServer { _ in nil }
        let url = server.url("/token?client_secret=SENTINEL")
        server.stop()
        do {
            _ = try await URLSessionUpstreamClient(timeout: 30).send(UpstreamRequest(method: "POST", url: url))
            Issue.record("expected a transport error")
        } catch {
            #expect(error == .transport(.connectRefused, "connection refused"))
            #expect(!error.description.contains("SENTINEL"))
        }
    }

    @Test(arguments: ["not a url", "file:///etc/passwd", "ftp://example.com/x", "http://", "https:///token"])
    func nonHTTPURLIsRefusedBeforeAnyIO(url: String) async {
        await #expect(throws: UpstreamError.transport(.invalidRequest, "invalid URL")) {
            try await URLSessionUpstreamClient().send(UpstreamRequest(method: "GET", url: url))
        }
    }

    @Test func sendsAcceptEncodingIdentity() async throws {
        let server = try LocalHTTPServer { _ in "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}" }
        defer { server.stop() }
        let request = UpstreamRequest(method: "GET", url: server.url("/user"), headers: [("Accept-Encoding", "gzip")])
        _ = try await URLSessionUpstreamClient(timeout: 30).send(request)
        let head = try #require(server.requests.first).lowercased()
        #expect(head.contains("\r\naccept-encoding: identity\r\n"))
        #expect(!head.contains("gzip"))
    }

    @Test func declaredLengthOverTheCapIsRefused() async throws {
        // 256 MiB announced and streamed from one 64 KiB piece, so the refusal cannot be a full read that came back late.
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 64 << 10)
        let server = try StreamingHTTPServer(
            head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(256 << 20)",
            piece: piece, count: 4096)
        defer { server.stop() }
        let client = URLSessionUpstreamClient(timeout: 30, maxResponseBytes: 1 << 20)
        await #expect(throws: UpstreamError.tooLarge(limit: 1 << 20)) {
            try await client.send(UpstreamRequest(method: "POST", url: server.url("/token")))
        }
        // Not asserted: how far the server got. FoundationNetworking sometimes keeps draining the
        // connection after the cancel; the caller has its answer and the bytes are not kept.
        _ = await server.finished()
    }

    @Test func chunkedBodyOverTheCapIsCutOff() async throws {
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 64 << 10)
        let server = try StreamingHTTPServer(
            head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked",
            piece: piece, count: 4096, chunked: true)
        defer { server.stop() }
        let client = URLSessionUpstreamClient(timeout: 30, maxResponseBytes: 1 << 20)
        await #expect(throws: UpstreamError.tooLarge(limit: 1 << 20)) {
            try await client.send(UpstreamRequest(method: "GET", url: server.url("/user")))
        }
        // Not asserted: how far the server got. FoundationNetworking sometimes keeps draining the
        // connection after the cancel; the caller has its answer and the bytes are not kept.
        _ = await server.finished()
    }

    @Test func gzipBombIsCountedAfterDecoding() async throws {
        // About 100 KB on the wire, 16 MiB once inflated: the cap applies to what it decodes to.
        let bomb = GzipBomb.make(zeroBytes: 16 << 20)
        let server = try StreamingHTTPServer(
            head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: \(bomb.count)",
            piece: bomb, count: 1)
        defer { server.stop() }
        let client = URLSessionUpstreamClient(timeout: 30, maxResponseBytes: 256 << 10)
        #expect(bomb.count < 256 << 10)
        await #expect(throws: UpstreamError.tooLarge(limit: 256 << 10)) {
            try await client.send(UpstreamRequest(method: "GET", url: server.url("/user")))
        }
    }

    @Test func smallGzipAnswerIsDecodedWithinTheCap() async throws {
        // The same generator, inflating to less than the cap, comes back decoded: the bomb test is about size alone.
        let small = GzipBomb.make(zeroBytes: 4000)
        let server = try StreamingHTTPServer(
            head: "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(small.count)",
            piece: small, count: 1)
        defer { server.stop() }
        let response = try await URLSessionUpstreamClient(timeout: 30, maxResponseBytes: 4096)
            .send(UpstreamRequest(method: "GET", url: server.url("/user")))
        #expect(response.body == [UInt8](repeating: 0, count: 4000))
    }

    @Test(arguments: [false, true])
    func answerExactlyAtTheCapIsAccepted(chunked: Bool) async throws {
        let piece = [UInt8](repeating: UInt8(ascii: "b"), count: 1024)
        let head = chunked ? "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked" : "HTTP/1.1 200 OK\r\nContent-Length: 4096"
        let server = try StreamingHTTPServer(head: head, piece: piece, count: 4, chunked: chunked)
        defer { server.stop() }
        let response = try await URLSessionUpstreamClient(timeout: 30, maxResponseBytes: 4096)
            .send(UpstreamRequest(method: "GET", url: server.url("/user")))
        #expect(response.status == 200)
        #expect(response.body == [UInt8](repeating: UInt8(ascii: "b"), count: 4096))
    }

    @Test(arguments: [false, true])
    func oneByteOverTheCapIsRefused(chunked: Bool) async throws {
        let piece = [UInt8](repeating: UInt8(ascii: "b"), count: 4097)
        let head = chunked ? "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked" : "HTTP/1.1 200 OK\r\nContent-Length: 4097"
        let server = try StreamingHTTPServer(head: head, piece: piece, count: 1, chunked: chunked)
        defer { server.stop() }
        await #expect(throws: UpstreamError.tooLarge(limit: 4096)) {
            try await URLSessionUpstreamClient(timeout: 30, maxResponseBytes: 4096).send(
                UpstreamRequest(method: "GET", url: server.url("/user")))
        }
    }

    @Test(arguments: ["HTTP/1.1 abc Whatever\r\nContent-Length: 0\r\n\r\n", "hello\r\n\r\n"])
    func malformedStatusLineIsAMalformedResponseNotABadURL(answer: String) async throws {
        let server = try LocalHTTPServer { _ in answer }
        defer { server.stop() }
        do {
            _ = try await URLSessionUpstreamClient(timeout: 30).send(
                UpstreamRequest(method: "POST", url: server.url("/token?code=SENTINEL")))
            Issue.record("expected a transport error")
        } catch {
            #expect(error == .transport(.badResponse, "malformed HTTP response"))
            #expect(!error.description.contains("SENTINEL"))
        }
    }

    @Test func unauthorizedWithABasicChallengeComesBackAsTheAnswer() async throws {
        // RFC 6749 §5.2: a token endpoint may answer 401 with WWW-Authenticate; the broker reads it, never answers it.
        let body = "{\"error\":\"invalid_client\"}"
        let server = try LocalHTTPServer { _ in
            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"token\"\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
        }
        defer { server.stop() }
        let response = try await URLSessionUpstreamClient(timeout: 30).send(UpstreamRequest(method: "POST", url: server.url("/token")))
        #expect(response.status == 401)
        #expect(String(decoding: response.body, as: UTF8.self) == body)
        #expect(server.requests.count == 1)
    }

    @Test func hugeTokenAnswerIsAnUpstreamErrorNamingTheCap() async throws {
        // A real client and socket: the cap lives in URLSessionUpstreamClient, not in the fake.
        let piece = [UInt8](repeating: UInt8(ascii: " "), count: 64 << 10)
        let server = try StreamingHTTPServer(
            head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked",
            piece: piece, count: 64, chunked: true)
        defer { server.stop() }
        let upstream = URLSessionUpstreamClient(timeout: 30, maxResponseBytes: 64 << 10)
        let environment = ["GOOGLE_CLIENT_ID": "google-id.apps.googleusercontent.com", "GOOGLE_CLIENT_SECRET": "google-secret-SENTINEL"]
        var provider = try #require(try ProviderRegistry.load(environment: environment, providersFile: nil).provider(named: "google"))
        provider = try provider.oauth2Configuration(discovered: GoogleOpenID.metadata)
        provider.tokenURL = server.url("/token")
        let subject = OAuth2Client(
            settings: try OAuth2Settings(provider), redirectURI: "https://broker.example/callback", upstream: upstream)
        do {
            _ = try await subject.exchange(code: "code-SENTINEL", codeVerifier: nil)
            Issue.record("expected an upstream error")
        } catch {
            #expect(error == .upstreamError(step: "token_exchange", reason: "the answer is larger than 65536 bytes"))
            #expect(!error.message.contains("SENTINEL"))
        }
    }
}
