import BrokerHTTP
import BrokerTestSupport
import Dispatch
import Glibc
import Synchronization
import Testing

/// The outbound client against real sockets on 127.0.0.1: what it sends, how it frames and bounds answers, its pools.
struct HTTPClientTests {
    static let ok = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"

    static func client(cap: Int = 8, connectTimeout: Double = 5, highWater: Int = 256 * 1024) -> HTTPClient {
        HTTPClient(
            configuration: HTTPClient.Configuration(
                connectTimeout: connectTimeout, maxConnectionsPerHost: cap, idleTimeout: 30, streamHighWater: highWater))
    }

    static func get(_ url: String) -> HTTPClientRequest { HTTPClientRequest(method: "GET", url: url) }

    @Test func sendsTheRequestAndReadsTheAnswer() async throws {
        let server = try FakeUpstream { _, _ in .reply(Self.ok) }
        defer { server.stop() }
        let request = HTTPClientRequest(
            method: "POST", url: server.url("/token?x=1"),
            headers: [("Accept", "application/json"), ("Accept-Encoding", "gzip"), ("Host", "evil.example")],
            body: .bytes(Array("grant_type=code".utf8)))
        let (head, body) = try await Self.client().execute(request, timeout: 60, maxBodyBytes: 1024)
        #expect(head.status == 200 && head.headers["content-type"] == "application/json" && body == Array("{}".utf8))
        let seen = try #require(server.requests.first)
        #expect(seen.hasPrefix("POST /token?x=1 HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"))
        #expect(seen.contains("Accept: application/json\r\n") && seen.contains("Accept-Encoding: identity\r\n"))
        #expect(seen.contains("User-Agent: token-broker\r\n") && !seen.contains("Accept: */*"))
        #expect(!seen.contains("gzip") && !seen.contains("evil.example"))
        #expect(seen.hasSuffix("Content-Length: 15\r\n\r\ngrant_type=code"))
    }

    @Test func keepAliveCarriesSequentialCallsOnOneConnection() async throws {
        let server = try FakeUpstream { _, _ in .reply(Self.ok) }
        defer { server.stop() }
        let client = Self.client()
        for index in 0..<5 {
            let (head, _) = try await client.execute(Self.get(server.url("/\(index)")), timeout: 60, maxBodyBytes: 64)
            #expect(head.status == 200)
        }
        #expect(server.accepted == 1 && server.requests.count == 5)
    }

    @Test func answerWithConnectionCloseIsNotReused() async throws {
        let server = try FakeUpstream { _, _ in .reply("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", close: true) }
        defer { server.stop() }
        let client = Self.client()
        for _ in 0..<3 { _ = try await client.execute(Self.get(server.url("/")), timeout: 60, maxBodyBytes: 64) }
        #expect(server.accepted == 3)
    }

    @Test func aPooledConnectionTheServerClosedIsReplaced() async throws {
        // The server closes after each answer without saying so: the next call finds a dead pooled connection.
        let server = try FakeUpstream { _, _ in .reply(Self.ok, close: true) }
        defer { server.stop() }
        let client = Self.client()
        for _ in 0..<4 {
            let (head, _) = try await client.execute(Self.get(server.url("/")), timeout: 60, maxBodyBytes: 64)
            #expect(head.status == 200)
        }
        #expect(server.accepted == 4 && server.requests.count == 4)
    }

    @Test func anIdleConnectionClosesAfterTheIdleTimeout() async throws {
        let server = try FakeUpstream { _, _ in .reply(Self.ok) }
        defer { server.stop() }
        let client = HTTPClient(configuration: HTTPClient.Configuration(idleTimeout: 0.2))
        _ = try await client.execute(Self.get(server.url("/a")), timeout: 60, maxBodyBytes: 64)
        #expect(await eventually { client.openConnections(to: server.url("/")) == 0 })
        _ = try await client.execute(Self.get(server.url("/b")), timeout: 60, maxBodyBytes: 64)
        #expect(server.accepted == 2)
    }

    @Test func aCallWaitingForAPlaceInThePoolEndsAtItsDeadline() async throws {
        let server = try FakeUpstream { _, _ in .hold }
        defer { server.stop() }
        let client = Self.client(cap: 1)
        let holder = Task { try? await client.execute(Self.get(server.url("/held")), timeout: 60, maxBodyBytes: 64) }
        #expect(await eventually { server.requests.count == 1 })
        await #expect(throws: HTTPClientError.deadline) {
            _ = try await client.execute(Self.get(server.url("/waiting")), timeout: 0.3, maxBodyBytes: 64)
        }
        #expect(server.accepted == 1)
        holder.cancel()
        _ = await holder.value
    }

    @Test func concurrentCallsRespectThePerHostCap() async throws {
        let gate = DispatchSemaphore(value: 0)
        let server = try FakeUpstream { _, _ in
            gate.wait()
            return .reply(Self.ok)
        }
        defer { server.stop() }
        let client = Self.client(cap: 3)
        let calls = Task {
            await withTaskGroup(of: Int.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        (try? await client.execute(Self.get(server.url("/\(index)")), timeout: 60, maxBodyBytes: 64))?.head.status ?? 0
                    }
                }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        #expect(await eventually { server.requests.count == 3 })
        #expect(client.openConnections(to: server.url("/")) == 3)
        for _ in 0..<8 { gate.signal() }
        let statuses = await calls.value
        #expect(statuses == Array(repeating: 200, count: 8))
        #expect(server.accepted == 3)
    }

    @Test func aRefusedConnectionIsNamed() async throws {
        try await Loopback.withRefusingPort { port in
            await #expect(throws: HTTPClientError.connectRefused) {
                _ = try await Self.client().execute(Self.get("http://127.0.0.1:\(port)/"), timeout: 60, maxBodyBytes: 64)
            }
        }
    }

    @Test func aConnectionNobodyCompletesEndsAtTheConnectTimeout() async throws {
        // A listener with a backlog of 0 that never accepts: once its queue holds a connection, the kernel drops
        // further SYNs, so a connect stays pending (RFC 9293 retransmissions) until the client gives up.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = Loopback.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        try #require(listening)
        let port = Int(UInt16(bigEndian: address.sin_port))
        var fillers: [Int32] = []
        defer { for fd in fillers { close(fd) } }
        for _ in 0..<2 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var target = Loopback.address(port: port)
            _ = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            fillers.append(fd)
        }
        await #expect(throws: HTTPClientError.connectTimeout) {
            _ = try await Self.client(connectTimeout: 0.5).execute(
                Self.get("http://127.0.0.1:\(port)/"), timeout: 60, maxBodyBytes: 64)
        }
    }

    @Test func aServerThatNeverAnswersEndsAtTheDeadline() async throws {
        let server = try FakeUpstream { _, _ in .hold }
        defer { server.stop() }
        await #expect(throws: HTTPClientError.deadline) {
            _ = try await Self.client().execute(Self.get(server.url("/")), timeout: 0.3, maxBodyBytes: 64)
        }
    }

    @Test func aDrippedAnswerEndsAtTheDeadline() async throws {
        let server = try FakeUpstream { _, _ in
            .drip("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "x", count: 100000))
        }
        defer { server.stop() }
        await #expect(throws: HTTPClientError.deadline) {
            _ = try await Self.client().execute(Self.get(server.url("/")), timeout: 0.5, maxBodyBytes: 1 << 20)
        }
    }

    @Test func anAnswerCutOffMidBodyIsAnError() async throws {
        let server = try FakeUpstream { _, _ in .reply("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this", close: true) }
        defer { server.stop() }
        await #expect(throws: HTTPClientError.badResponse(reason: "The connection closed before the response was complete.")) {
            _ = try await Self.client().execute(Self.get(server.url("/")), timeout: 60, maxBodyBytes: 1024)
        }
    }

    @Test func aCompressedAnswerIsRefused() async throws {
        let server = try FakeUpstream { _, _ in .reply("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc") }
        defer { server.stop() }
        await #expect(throws: HTTPClientError.badResponse(reason: "The answer is in a content coding that was not asked for.")) {
            _ = try await Self.client().execute(Self.get(server.url("/")), timeout: 60, maxBodyBytes: 1024)
        }
    }

    @Test func aMalformedAnswerIsABadResponse() async throws {
        let server = try FakeUpstream { _, _ in
            .reply("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        }
        defer { server.stop() }
        do {
            _ = try await Self.client().execute(Self.get(server.url("/")), timeout: 60, maxBodyBytes: 1024)
            Issue.record("expected a bad response")
        } catch {
            #expect(error.code == "bad_response")
        }
    }

    @Test func redirectsAreReturnedNotFollowed() async throws {
        let server = try FakeUpstream { _, _ in .reply("HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n") }
        defer { server.stop() }
        let (head, _) = try await Self.client().execute(Self.get(server.url("/")), timeout: 60, maxBodyBytes: 64)
        #expect(head.status == 302 && server.requests.count == 1)
    }

    @Test func badURLsAreRefusedBeforeAnyConnection() async throws {
        for bad in ["ftp://x/", "http://", "http://user@host/", "http://h/a b", "http://h:99999/", "no-scheme"] {
            await #expect(throws: HTTPClientError.invalidURL, "\(bad)") {
                _ = try await Self.client().execute(Self.get(bad), timeout: 1, maxBodyBytes: 64)
            }
        }
        await #expect(throws: HTTPClientError.invalidRequest) {
            _ = try await Self.client().execute(
                HTTPClientRequest(method: "GET", url: "http://127.0.0.1:1/", headers: [("X-A", "1\r\nX-B: 2")]), timeout: 1,
                maxBodyBytes: 64)
        }
    }

    static let big = 64 << 20
    static let piece = [UInt8](repeating: 0x61, count: 64 << 10)

    @Test("A 64 MiB answer over the cap is refused and the server sees the client leave", arguments: [false, true])
    func largeAnswerIsCutAtTheCap(chunked: Bool) async throws {
        let head = chunked ? "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked" : "HTTP/1.1 200 OK\r\nContent-Length: \(Self.big)"
        let server = try FakeUpstream { _, _ in .stream(head: head, piece: Self.piece, count: Self.big / Self.piece.count, chunked: chunked)
        }
        defer { server.stop() }
        await #expect(throws: HTTPClientError.tooLarge(limit: 1 << 20)) {
            _ = try await Self.client().execute(Self.get(server.url("/")), timeout: 60, maxBodyBytes: 1 << 20)
        }
        #expect(await eventually { server.hangUps == 1 })
        #expect(server.streamedBytes < Self.big)
    }

    @Test func aTruncatingCallKeepsTheBodyUpToTheCap() async throws {
        let server = try FakeUpstream { _, _ in
            .stream(
                head: "HTTP/1.1 200 OK\r\nContent-Length: \(Self.big)", piece: Self.piece, count: Self.big / Self.piece.count,
                chunked: false)
        }
        defer { server.stop() }
        let (head, body) = try await Self.client().execute(Self.get(server.url("/")), timeout: 60, maxBodyBytes: 100_000, truncating: true)
        #expect(head.status == 200 && body.count == 100_000)
    }

    @Test("A streamed 64 MiB answer arrives whole, read at the reader's pace", arguments: [false, true])
    func streamedAnswerHasBackpressure(chunked: Bool) async throws {
        let head = chunked ? "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked" : "HTTP/1.1 200 OK\r\nContent-Length: \(Self.big)"
        let server = try FakeUpstream { request, _ in
            request.hasPrefix("GET /next ")
                ? .reply(Self.ok) : .stream(head: head, piece: Self.piece, count: Self.big / Self.piece.count, chunked: chunked)
        }
        defer { server.stop() }
        let client = Self.client(highWater: 128 << 10)
        let response = try await client.stream(Self.get(server.url("/")), timeout: 120)
        #expect(response.status == 200)
        // Nobody reads yet: the server fills the socket buffers and the client's queue, then must wait.
        #expect(await eventually { server.streamedBytes > 0 })
        #expect(server.streamedBytes < Self.big)
        var total = 0
        for try await piece in response.body { total += piece.count }
        #expect(total == Self.big)
        // Read to its end, the connection went back to the pool and carries the next call.
        let (next, _) = try await client.execute(Self.get(server.url("/next")), timeout: 60, maxBodyBytes: 64)
        #expect(next.status == 200 && server.accepted == 1)
    }

    @Test(arguments: [false, true])
    func aStreamedAnswerWhoseLastPiecePausedReadingStillEnds(chunked: Bool) async throws {
        // A queue of one byte: every piece pauses the socket, the last one too, after which no byte will come.
        let answer =
            chunked
            ? "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
            : "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
        let server = try FakeUpstream { _, _ in .reply(answer) }
        defer { server.stop() }
        let response = try await Self.client(highWater: 1).stream(Self.get(server.url("/")), timeout: 60)
        var body: [UInt8] = []
        for try await piece in response.body { body += piece }
        #expect(body == Array("hello".utf8))
    }

    @Test func aStreamedRequestBodyIsSentChunked() async throws {
        let server = try FakeUpstream { _, _ in .reply(Self.ok) }
        defer { server.stop() }
        let pieces = Mutex<[[UInt8]]>([Array("hello ".utf8), Array("world".utf8)])
        let request = HTTPClientRequest(
            method: "PUT", url: server.url("/upload"),
            body: .stream { pieces.withLock { $0.isEmpty ? nil : $0.removeFirst() } })
        let (head, _) = try await Self.client().execute(request, timeout: 60, maxBodyBytes: 64)
        #expect(head.status == 200)
        let seen = try #require(server.requests.first)
        #expect(seen.contains("Transfer-Encoding: chunked\r\n") && seen.hasSuffix("\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n"))
    }

    @Test func aStreamedRequestBodyOfKnownLengthIsSentWithContentLength() async throws {
        let server = try FakeUpstream { _, _ in .reply(Self.ok) }
        defer { server.stop() }
        let pieces = Mutex<[[UInt8]]>([Array("hello ".utf8), Array("world".utf8)])
        let request = HTTPClientRequest(
            method: "PUT", url: server.url("/upload"),
            body: .stream(length: 11) { pieces.withLock { $0.isEmpty ? nil : $0.removeFirst() } })
        let (head, _) = try await Self.client().execute(request, timeout: 60, maxBodyBytes: 64)
        #expect(head.status == 200)
        let seen = try #require(server.requests.first)
        #expect(seen.contains("Content-Length: 11\r\n") && !seen.contains("chunked") && seen.hasSuffix("\r\n\r\nhello world"))
    }

    @Test(arguments: [nil, 100] as [Int?])
    func aStreamedRequestBodyThatBreaksOffNeverReachesTheServerWhole(length: Int?) async throws {
        let server = try FakeUpstream { _, _ in .reply(Self.ok) }
        defer { server.stop() }
        struct Broken: Error {}
        let step = Mutex(0)
        let request = HTTPClientRequest(
            method: "PUT", url: server.url("/upload"),
            body: .stream(length: length) {
                let i = step.withLock { n -> Int in
                    defer { n += 1 }
                    return n
                }
                if i == 0 { return Array("partial".utf8) }
                // Chunked: the source fails. With a length: it ends short of it.
                if length == nil { throw Broken() }
                return nil
            })
        await #expect(throws: HTTPClientError.cancelled) {
            _ = try await Self.client().execute(request, timeout: 60, maxBodyBytes: 64)
        }
        // The server saw the connection end without a whole request.
        #expect(await eventually { server.ended == 1 })
        #expect(server.requests.isEmpty)
    }
}
