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
        let entered = TestEvent()
        let server = try TestServer.start(slowEntered: entered)
        let slow = try RawClient(port: server.port, timeout: 5)
        slow.send("GET /slow?ms=1200 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await entered.wait(), "the handler is at work")
        // The grace runs out while the handler sleeps: shutdown closes the connection and its descriptor.
        await server.shutdown(grace: 0.1)
        #expect(await slow.readsEOF())
        // Take the lowest free descriptors, as the next accept or socket() anywhere in the process would.
        var pairs: [[Int32]] = []
        for _ in 0..<16 {
            var fds: [Int32] = [-1, -1]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            pairs.append(fds)
        }
        try await Task.sleep(nanoseconds: 1_500_000_000)
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
