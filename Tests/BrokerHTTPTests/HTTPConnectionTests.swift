import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerHTTP

#if canImport(Glibc)
import Glibc
#endif

/// A connection's life after it is closed: nothing it still owes may reach another descriptor.
@Suite struct HTTPConnectionTests {
    @Test func aResponseFinishedAfterShutdownClosedItsConnectionIsNeverWritten() async throws {
        let entered = TestEvent(), release = TestEvent()
        weak var released: HTTPServer?
        let slow: RawClient
        do {
            let server = try TestServer.start(slowEntered: entered, slowRelease: release)
            released = server
            slow = try RawClient(port: server.port)
            slow.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await entered.wait(), "the handler is at work")
            // The grace runs out while the handler waits: shutdown closes the connection and its descriptor.
            await server.shutdown(grace: 0.1)
        }
        #expect(await slow.readsEOF())
        // Take the lowest free descriptors, as the next accept or socket() anywhere in the process would.
        var pairs: [[Int32]] = []
        for _ in 0..<16 {
            var fds: [Int32] = [-1, -1]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            pairs.append(fds)
        }
        // The handler answers now; once its answer is dropped nothing holds the server any more.
        release.signal()
        #expect(await eventually { released == nil }, "the server outlived its handler")
        var stray = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        for pair in pairs {
            for fd in pair {
                let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if n > 0 { stray += String(decoding: buffer[0..<n], as: UTF8.self) }
            }
            close(pair[0])
            close(pair[1])
        }
        #expect(stray.isEmpty, "the closed connection's late response went to a reused descriptor: \(stray)")
    }
}

/// Every way a connection ends gives its socket back to the system, whatever it was waiting for.
@Suite struct HTTPConnectionDescriptorTests {
    @Test func everyWayAConnectionEndsClosesItsDescriptor() async throws {
        try await TestServer.with { server in
            // The client closes an idle keep-alive connection.
            var idle: RawClient? = try RawClient(port: server.port)
            let idleSocket = try #require(await acceptedSocket(of: idle!, port: server.port))
            idle!.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await idle!.readResponse()?.status == 200)
            idle = nil
            #expect(await eventually { !isOpen(idleSocket) }, "an idle connection the client closed")

            // The request asks to close.
            let closing = try RawClient(port: server.port)
            let closingSocket = try #require(await acceptedSocket(of: closing, port: server.port))
            closing.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(await closing.readResponse()?.status == 200)
            #expect(await closing.readsEOF())
            #expect(await eventually { !isOpen(closingSocket) }, "a Connection: close request")

            // A malformed request (RFC 9112 §5.1: no space before the colon) is answered 400 and closed.
            let malformed = try RawClient(port: server.port)
            let malformedSocket = try #require(await acceptedSocket(of: malformed, port: server.port))
            malformed.send("GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n")
            #expect(await malformed.readResponse()?.status == 400)
            #expect(await eventually { !isOpen(malformedSocket) }, "a malformed request")

            // The client resets while the server waits for room to write a large response.
            var reader: RawClient? = try RawClient(port: server.port)
            let readerSocket = try #require(await acceptedSocket(of: reader!, port: server.port))
            reader!.send("GET /big?size=16000000 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await eventually { sendQueueIsFull(readerSocket) }, "the response fills the socket")
            var reset = linger(l_onoff: 1, l_linger: 0)
            setsockopt(reader!.fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
            reader = nil
            #expect(await eventually { !isOpen(readerSocket) }, "a reset during a blocked write")

            // The client leaves while a handler runs as a task.
            var leaving: RawClient? = try RawClient(port: server.port)
            let leavingSocket = try #require(await acceptedSocket(of: leaving!, port: server.port))
            leaving!.send("GET /slow?ms=300 HTTP/1.1\r\nHost: x\r\n\r\n")
            leaving = nil
            #expect(await eventually { !isOpen(leavingSocket) }, "a client gone while its handler ran")
        }
    }

    /// The inode of the server's side of `client`'s connection, once the server has accepted it.
    private func acceptedSocket(of client: RawClient, port: Int) async -> UInt64? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(client.fd, $0, &length) }
        }
        let local = String(format: ":%04X", port)
        let remote = String(format: ":%04X", Int(UInt16(bigEndian: address.sin_port)))
        var inode: UInt64?
        _ = await eventually {
            inode = tcpEntries().first { $0.local.hasSuffix(local) && $0.remote.hasSuffix(remote) && $0.inode != 0 }?.inode
            return inode != nil
        }
        return inode
    }

    /// Whether a descriptor of this process still refers to socket `inode`.
    private func isOpen(_ inode: UInt64) -> Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == "socket:[\(inode)]" }
    }

    /// Whether socket `inode` has more than 64 KiB waiting to be sent (its client reads nothing).
    private func sendQueueIsFull(_ inode: UInt64) -> Bool {
        (tcpEntries().first { $0.inode == inode }?.queued ?? 0) > 65_536
    }

    /// The IPv4 TCP sockets of /proc/net/tcp: addresses as the kernel prints them, bytes queued to send, inode.
    private func tcpEntries() -> [(local: String, remote: String, queued: Int, inode: UInt64)] {
        // Read to the end: /proc files report a size of 0.
        let fd = open("/proc/net/tcp", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while case let n = read(fd, &chunk, chunk.count), n > 0 { bytes += chunk[0..<n] }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 9, let inode = UInt64(fields[9]) else { return nil }
            let queued = fields[4].split(separator: ":").first.flatMap { Int($0, radix: 16) } ?? 0
            return (String(fields[1]), String(fields[2]), queued, inode)
        }
    }
}
