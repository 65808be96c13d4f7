import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerHTTP

#if canImport(Glibc)
import Glibc
#endif

/// Streaming routes on a real socket: bodies read while they arrive, with the socket's flow control holding the client
/// back, and answers sent piece by piece as their source yields them.
@Suite struct HTTPServerStreamingTests {
    /// What the routes of one test saw and are told.
    final class Probe: Sendable {
        /// Signalled when the upload handler has its first piece.
        let firstPiece = TestEvent()
        /// Signalled when a handler may go on.
        let release = TestEvent()
        /// Signalled when a stream's source was cancelled.
        let cancelled = TestEvent()
        /// Signalled when the event source yielded its first event.
        let firstEvent = TestEvent()
        /// The error the upload handler's body ended with.
        let bodyError = Mutex<RequestBodyError?>(nil)
    }

    static func router(_ probe: Probe) -> Router {
        var router = Router()
        // Counts and hashes the body as it arrives; with `?wait`, reads nothing until released.
        router.add(
            .POST, "/upload",
            .streaming(
                { request in
                    if request.query("wait") != nil { _ = await probe.release.wait() }
                    var hash = FNV()
                    var count = 0
                    var pieces = 0
                    do throws(RequestBodyError) {
                        if let body = request.bodyStream {
                            while let piece = try await body.next() {
                                if pieces == 0 { probe.firstPiece.signal() }
                                if request.query("first") != nil, pieces == 0 { _ = await probe.release.wait() }
                                pieces += 1
                                count += piece.count
                                hash.update(piece)
                            }
                        } else {
                            count = request.body.count
                            hash.update(request.body)
                        }
                    } catch {
                        probe.bodyError.withLock { $0 = error }
                        return Response(status: .badRequest)
                    }
                    return .json(.ok, #"{"bytes":\#(count),"fnv":"\#(hash.value)"}"#)
                }, maxBodyBytes: 64 << 20))
        // Answers before reading its body.
        router.add(.PUT, "/early", .streaming({ _ in Response(status: .noContent) }, maxBodyBytes: 1 << 20))
        // `n` pieces of 64 KiB, each byte its piece's index.
        router.add(
            .GET, "/download",
            .async { request in
                let n = Int(request.query("n") ?? "1") ?? 1
                let sent = Mutex(0)
                let known = request.query("length") != nil
                return Response(
                    status: .ok,
                    stream: ResponseStream(
                        length: known ? n * 65536 : nil,
                        next: {
                            let i = sent.withLock { count -> Int in
                                defer { count += 1 }
                                return count
                            }
                            return i < n ? [UInt8](repeating: UInt8(i & 0xFF), count: 65536) : nil
                        },
                        cancel: { probe.cancelled.signal() }))
            })
        // Server-sent events: one event, then another only once released.
        router.add(
            .GET, "/events",
            .async { _ in
                let step = Mutex(0)
                return Response(
                    status: .ok, headers: HTTPHeaders([("Content-Type", "text/event-stream")]),
                    stream: ResponseStream(
                        next: {
                            let i = step.withLock { s -> Int in
                                defer { s += 1 }
                                return s
                            }
                            switch i {
                            case 0:
                                probe.firstEvent.signal()
                                return Array("data: one\n\n".utf8)
                            case 1:
                                _ = await probe.release.wait()
                                return Array("data: two\n\n".utf8)
                            default: return nil
                            }
                        }, cancel: { probe.cancelled.signal() }))
            })
        // A source that never ends.
        router.add(
            .GET, "/forever",
            .async { _ in
                Response(
                    status: .ok,
                    stream: ResponseStream(
                        next: { [UInt8](repeating: 0x2E, count: 16384) }, cancel: { probe.cancelled.signal() }))
            })
        // A source that fails after one piece.
        router.add(
            .GET, "/broken",
            .async { _ in
                let step = Mutex(0)
                return Response(
                    status: .ok,
                    stream: ResponseStream(next: {
                        let i = step.withLock { s -> Int in
                            defer { s += 1 }
                            return s
                        }
                        if i == 0 { return Array("partial".utf8) }
                        throw CancellationError()
                    }))
            })
        return router
    }

    static func with(_ body: (HTTPServer, Probe) async throws -> Void) async throws {
        let probe = Probe()
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.headerTimeout = 600
        configuration.bodyTimeout = 600
        configuration.writeTimeout = 600
        configuration.idleTimeout = 600
        let server = HTTPServer(configuration: configuration, router: router(probe))
        try server.start()
        do {
            try await body(server, probe)
        } catch {
            await server.shutdown(grace: 1)
            throw error
        }
        await server.shutdown(grace: 1)
    }

    /// FNV-1a over the bytes seen so far, to compare a streamed body with what was sent.
    struct FNV {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        mutating func update(_ bytes: [UInt8]) {
            for b in bytes { value = (value ^ UInt64(b)) &* 0x100_0000_01b3 }
        }
    }

    static func digest(_ bytes: [UInt8]) -> String {
        var hash = FNV()
        hash.update(bytes)
        return String(hash.value)
    }

    /// A body of `count` bytes that is not one repeated byte.
    static func payload(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
    }

    @Test func theHandlerReadsTheFirstPieceBeforeTheRestIsSent() async throws {
        try await Self.with { server, probe in
            let client = try RawClient(port: server.port)
            let body = Self.payload(300_000)
            client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n")
            client.send(Array(body[0..<1000]))
            #expect(await probe.firstPiece.wait(), "the handler runs while the body is still arriving")
            client.send(Array(body[1000...]))
            let reply = await client.readResponse()
            #expect(reply?.status == 200)
            #expect(reply?.text == #"{"bytes":300000,"fnv":"\#(Self.digest(body))"}"#)
        }
    }

    @Test func aChunkedUploadArrivesWholeAndTheConnectionIsKept() async throws {
        try await Self.with { server, _ in
            let client = try RawClient(port: server.port)
            let body = Self.payload(200_000)
            var wire = Array("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
            for start in stride(from: 0, to: body.count, by: 7000) {
                let piece = body[start..<min(start + 7000, body.count)]
                wire += Array("\(String(piece.count, radix: 16));ext=1\r\n".utf8) + piece + [13, 10]
            }
            wire += Array("0\r\nTrailer-Field: x\r\n\r\n".utf8)
            client.send(wire)
            #expect(await client.readResponse()?.text == #"{"bytes":200000,"fnv":"\#(Self.digest(body))"}"#)
            // The same connection serves the next request.
            client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
            #expect(await client.readResponse()?.text == #"{"bytes":3,"fnv":"\#(Self.digest(Array("abc".utf8)))"}"#)
        }
    }

    @Test func aHandlerThatDoesNotReadHoldsTheClientBack() async throws {
        try await Self.with { server, probe in
            let client = try RawClient(port: server.port)
            let total = 48 << 20
            client.send("POST /upload?wait HTTP/1.1\r\nHost: x\r\nContent-Length: \(total)\r\n\r\n")
            // Without a reader the server stops reading: the kernel's buffers fill and the client can send no more.
            let flags = fcntl(client.fd, F_GETFL)
            _ = fcntl(client.fd, F_SETFL, flags | O_NONBLOCK)
            let block = [UInt8](repeating: 0x61, count: 1 << 20)
            var sent = 0
            var stalls = 0
            while sent < total && stalls < 200 {
                let n = block.withUnsafeBytes { send(client.fd, $0.baseAddress, min($0.count, total - sent), Int32(MSG_NOSIGNAL)) }
                if n > 0 {
                    sent += n
                    stalls = 0
                } else {
                    stalls += 1
                    usleep(5000)
                }
            }
            #expect(sent < total, "the server read \(sent) bytes nobody asked for")
            probe.release.signal()
            _ = fcntl(client.fd, F_SETFL, flags)
            let rest = [UInt8](repeating: 0x61, count: total - sent)
            await offPool { client.send(rest) }
            let reply = await client.readResponse()
            #expect(reply?.text.hasPrefix(#"{"bytes":\#(total),"#) == true)
        }
    }

    @Test func aBodyOverTheRoutesLimitIs413AndNeverStarts() async throws {
        try await Self.with { server, probe in
            let client = try RawClient(port: server.port)
            client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: \(65 << 20)\r\n\r\n")
            let reply = await client.readResponse()
            #expect(reply?.status == 413)
            #expect(probe.firstPiece.count == 0)
            // Over the server's own 1 MiB limit, within the route's: accepted.
            let other = try RawClient(port: server.port)
            let body = Self.payload(3 << 20)
            other.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n")
            other.send(body)
            #expect(await other.readResponse()?.status == 200)
        }
    }

    @Test func expectContinueIsAnsweredByAStreamingRoute() async throws {
        try await Self.with { server, _ in
            let client = try RawClient(port: server.port)
            client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            #expect(await client.readResponse()?.status == 100)
            client.send("hello")
            #expect(await client.readResponse()?.text.contains(#""bytes":5"#) == true)
        }
    }

    @Test func aHandlerThatAnswersFirstClosesTheConnection() async throws {
        try await Self.with { server, _ in
            let client = try RawClient(port: server.port)
            client.send("PUT /early HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nabc")
            let reply = await client.readResponse()
            #expect(reply?.status == 204)
            #expect(reply?.header("Connection") == "close", "the unread body cannot be skipped on a kept connection")
        }
    }

    @Test func aBodyCutShortReachesTheHandlerAsBroken() async throws {
        try await Self.with { server, probe in
            let client = try RawClient(port: server.port)
            client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nabc")
            #expect(await probe.firstPiece.wait())
            client.shutdownWrite()
            #expect(await eventually { probe.bodyError.withLock { $0 } == .broken })
        }
    }

    @Test func aStreamedAnswerIsChunkedAndTheConnectionIsKept() async throws {
        try await Self.with { server, _ in
            let client = try RawClient(port: server.port)
            client.send("GET /download?n=40 HTTP/1.1\r\nHost: x\r\n\r\n")
            let reply = await client.readResponse()
            #expect(reply?.status == 200)
            #expect(reply?.header("Transfer-Encoding") == "chunked")
            #expect(reply?.header("Content-Length") == nil)
            let expected = (0..<40).flatMap { [UInt8](repeating: UInt8($0), count: 65536) }
            #expect(reply?.body == expected)
            client.send("GET /download?n=2&length HTTP/1.1\r\nHost: x\r\n\r\n")
            let sized = await client.readResponse()
            #expect(sized?.header("Content-Length") == "131072")
            #expect(sized?.body.count == 131072)
        }
    }

    @Test func anHTTP10ClientGetsTheStreamUntilTheClose() async throws {
        try await Self.with { server, _ in
            let client = try RawClient(port: server.port)
            client.send("GET /download?n=3 HTTP/1.0\r\n\r\n")
            let reply = await client.readResponse()
            #expect(reply?.header("Transfer-Encoding") == nil)
            #expect(reply?.header("Connection") == "close")
            #expect(reply?.body.count == 3 * 65536)
        }
    }

    @Test func eventsPassThroughAsTheyAreProduced() async throws {
        try await Self.with { server, probe in
            let client = try RawClient(port: server.port)
            client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await offPool { client.blockingRead(until: Array("data: one\n\n".utf8)) }, "the first event arrives alone")
            #expect(!String(decoding: client.unread, as: UTF8.self).contains("two"))
            probe.release.signal()
            #expect(await offPool { client.blockingRead(until: Array("data: two\n\n\r\n0\r\n\r\n".utf8)) })
        }
    }

    @Test func aClientThatLeavesCancelsTheSource() async throws {
        try await Self.with { server, probe in
            var client: RawClient? = try RawClient(port: server.port)
            do {
                let reader = try #require(client)
                reader.send("GET /forever HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(await offPool { reader.blockingRead(until: Array("....".utf8)) })
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(reader.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            }
            // Gone mid-answer: the client resets (closed with a zero linger), a write fails or the reset is reported,
            // the connection closes, and the pump releases the source. (A `shutdown` alone sends a FIN, and a client
            // whose receive window the stream had already filled by then never draws the reset that new data would:
            // the server then waited for room to write until its write timeout, on a loaded machine.)
            client = nil
            #expect(await probe.cancelled.wait())
        }
    }

    @Test func aHeadRequestNeverReadsTheSource() async throws {
        try await Self.with { server, probe in
            let client = try RawClient(port: server.port)
            client.send("HEAD /download?n=5 HTTP/1.1\r\nHost: x\r\n\r\n")
            let reply = await client.readResponse(head: true)
            #expect(reply?.status == 200)
            #expect(await probe.cancelled.wait())
        }
    }

    @Test func aSourceThatFailsBreaksTheBodyOff() async throws {
        try await Self.with { server, _ in
            let client = try RawClient(port: server.port)
            client.send("GET /broken HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await client.readResponse() == nil, "no complete answer: the last chunk never comes")
        }
    }
}
