import BrokerCore
import BrokerTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

@testable import BrokerRedis

/// On Redis an account change and its event's outbox entries go in one `MULTI`/`EXEC`: both or neither.
struct RedisAccountEventTests {
    /// `account.connected` when the account had scope "a" before, `account.reconnected` otherwise: tells attempts apart.
    static let event: AccountChangeEvent = { before, after in
        guard let before, let after else { return nil }
        return (before.scope == "a" ? .accountConnected : .accountReconnected, BrokerEventData(account: after))
    }

    static func sink(_ outbox: RedisWebhookOutbox) -> OutboxEventSink {
        OutboxEventSink(outbox: outbox, urls: ["http://127.0.0.1:9/hooks"], now: { .fixture }, wallClock: { .fixture })
    }

    /// One RESP command, as a client sends it.
    static func resp(_ parts: [[UInt8]]) -> [UInt8] {
        var bytes = Array("*\(parts.count)\r\n".utf8)
        for part in parts { bytes += Array("$\(part.count)\r\n".utf8) + part + Array("\r\n".utf8) }
        return bytes
    }

    @Test func aTransactionSpoiledByAConcurrentWriterWritesNeitherTheChangeNorItsEvent() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let outbox = RedisWebhookOutbox(client: client)
            let accounts = RedisAccountRepository(client: client, outbox: outbox)
            try await accounts.put(.make(uid: "1", scope: "a"))
            let rival = try RawClient(port: server.port)
            let rivalBytes = try PlainJSONAccountCodec().encode(.make(uid: "1", scope: "rival"))
            let runs = Mutex(0)
            let stored = try await accounts.update(id: "github:1", reporting: Self.event, to: Self.sink(outbox)) { current in
                if runs.withLock({
                    $0 += 1; return $0
                }) == 1 {
                    // Another writer changes the watched key after the read: this attempt's EXEC must do nothing.
                    rival.send(Self.resp([Array("SET".utf8), Array("tb:account:github:1".utf8), rivalBytes]))
                    var reply = [UInt8](repeating: 0, count: 16)
                    _ = reply.withUnsafeMutableBytes { recv(rival.fd, $0.baseAddress, $0.count, 0) }
                }
                guard var account = current else { return nil }
                account.scope = (account.scope ?? "") + "+mine"
                return account
            }
            #expect(runs.withLock { $0 } == 2)
            #expect(stored?.scope == "rival+mine")
            // Only the committed attempt's event exists: the aborted one (which would be account.connected) left nothing.
            let leases = try await outbox.claim(limit: 10, now: Date.fixture.addingTimeInterval(1), lease: 60)
            #expect(leases.map(\.delivery.eventType) == ["account.reconnected"])
            #expect(try await outbox.stats().pending == 1)
        }
    }

    @Test(arguments: [false, true])
    func theAccountWriteAndItsDeliveriesAreQueuedBetweenOneMultiAndItsExec(cached: Bool) async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let outbox = RedisWebhookOutbox(client: client)
            let base = RedisAccountRepository(client: client, outbox: outbox)
            // The broker's repository when the client-side cache is on: it must pass the event through, not record it after.
            let accounts: any AccountRepository = cached ? CachingRedisAccountRepository(base: base, capacity: 10) : base
            try await accounts.put(.make(uid: "2", scope: "a"))
            let monitor = try RawClient(port: server.port)
            monitor.send(Self.resp([Array("MONITOR".utf8)]))
            var seen: [UInt8] = []
            func readMonitor(until marker: String) {
                var chunk = [UInt8](repeating: 0, count: 65536)
                for _ in 0..<200 where !String(decoding: seen, as: UTF8.self).contains(marker) {
                    let n = chunk.withUnsafeMutableBytes { recv(monitor.fd, $0.baseAddress, $0.count, 0) }
                    guard n > 0 else { break }
                    seen += chunk[..<n]
                }
            }
            readMonitor(until: "+OK")
            _ = try await accounts.update(id: "github:2", reporting: Self.event, to: Self.sink(outbox)) { current in
                guard var account = current else { return nil }
                account.scope = "b"
                return account
            }
            readMonitor(until: "\"EXEC\"")
            // Monitor lines end in CRLF, one Character in Swift.
            let lines = String(decoding: seen, as: UTF8.self).split(whereSeparator: \.isNewline)
            let multi = try #require(lines.firstIndex { $0.contains("\"MULTI\"") })
            let exec = try #require(lines.firstIndex { $0.contains("\"EXEC\"") })
            let inside = lines[multi..<exec]
            #expect(inside.contains { $0.contains("\"SET\" \"tb:account:github:2\"") })
            #expect(inside.contains { $0.contains("\"SET\" \"tb:webhooks:d:evt_") })
            #expect(inside.contains { $0.contains("\"ZADD\" \"tb:webhooks:due\"") })
        }
    }
}
