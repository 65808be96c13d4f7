import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerRedis

/// The client when Redis dies, returns or drops connections: it fails fast, never hangs, and recovers by itself.
struct RedisClientRecoveryTests {
    /// A call slower than this hangs, which is the bug looked for: a bound on a failing test, not a speed target
    /// (these calls fail at once, on a refused connection or a closed socket).
    private let hangBound: Duration = .seconds(60)

    @Test func aKilledServerFailsFastAndTheSameClientRecoversWhenItReturns() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client(poolSize: 4)
            let accounts = RedisAccountRepository(client: client)
            let flows = RedisFlowStore(client: client, now: { .fixture })
            try await accounts.put(Account.make(uid: "before"))
            try await Self.useEveryConnection(of: client)

            await server.kill()
            for attempt in 0..<8 {
                let started = ContinuousClock.now
                let error = await #expect(throws: RedisError.self) { try await client.command("SET", "k", "v") }
                #expect(ContinuousClock.now - started < hangBound)
                guard case .unavailable? = error else {
                    Issue.record("attempt \(attempt): expected unavailable, got \(String(describing: error))")
                    continue
                }
            }
            #expect(await client.ping() == false)
            let putError = await #expect(throws: StoreError.self) { try await accounts.put(Account.make(uid: "during")) }
            guard case .unavailable? = putError else {
                Issue.record("expected StoreError.unavailable, got \(String(describing: putError))")
                return
            }
            await #expect(throws: StoreError.self) { _ = try await accounts.list(provider: nil) }
            await #expect(throws: StoreError.self) { _ = try await flows.take(state: PendingFlow.randomState(), now: .fixture) }

            try await server.restart()
            let recovered = await eventually(interval: 0.1) { await client.ping() }
            #expect(recovered, "the client did not reconnect within a minute of the server's return")
            // The restarted server kept nothing (no persistence); the same repository writes and reads again.
            try await accounts.put(Account.make(uid: "after"))
            #expect(try await accounts.list(provider: nil).map(\.uid) == ["after"])
            try await Self.useEveryConnection(of: client)
        }
    }

    @Test func aCommandInFlightWhenTheServerDiesFailsAsUnavailable() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client(poolSize: 1, timeout: 600)
            #expect(await client.ping())
            // Stopped, the server holds the command unanswered until it is killed.
            server.pause()
            let inFlight = Task { try await client.command("SET", "k", "v") }
            #expect(await eventually { server.connectionsWithUnreadBytes() == 1 }, "the command is sent")
            let started = ContinuousClock.now
            await server.kill()
            let result = await inFlight.result
            #expect(ContinuousClock.now - started < hangBound)
            guard case .failure(let error as RedisError) = result, case .unavailable = error else {
                Issue.record("expected unavailable, got \(result)")
                return
            }
        }
    }

    @Test func connectionsTheServerClosedAreReplacedWithoutAFailedCall() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client(poolSize: 4)
            try await Self.useEveryConnection(of: client)
            let admin = server.client()
            let killed = try #require(try await admin.command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").integer)
            #expect(killed == 4)
            // Each pooled connection sees the server's FIN before its next use and reconnects.
            try await Self.useEveryConnection(of: client)
            #expect(try await client.command("GET", "k-3").string == "3")
        }
    }

    @Test func aServerThatStopsAnsweringTimesOutThenFailsFastThenRecovers() async throws {
        try await RedisServer.with { server async throws in
            let clock = ManualClock()
            let client = RedisClient(url: server.url(), poolSize: 2, timeout: 0.5, gate: RedisReconnectGate(now: clock.now))
            #expect(await client.ping())
            // Stopped, it never answers: the 0.5 s timeout is the only way either call below can end.
            server.pause()
            await #expect(throws: RedisError.timeout) { try await client.command("SET", "k", "v") }
            let error = await #expect(throws: RedisError.self) { try await client.command("GET", "k") }
            #expect(
                error
                    == .unavailable(
                        "redis at 127.0.0.1:\(server.port) did not answer within 0.5 s; next connect to 127.0.0.1:\(server.port) in 50 ms"))
            // Once the backoff wait is over and the server answers again, calls go through (a loaded machine may
            // time out a ping or two more; each moves the backoff clock on).
            server.resume()
            clock.advance(by: 60_000_000)
            let recovered = await eventually(interval: 0.1) {
                if await client.ping() { return true }
                clock.advance(by: 5_000_000_000)
                return false
            }
            #expect(recovered)
        }
    }

    /// Opens and uses every connection of the pool, each with its own key `k-<index>`.
    static func useEveryConnection(of client: RedisClient) async throws {
        for (index, connection) in client.pool.connections.enumerated() {
            let replies = try await connection.send([RedisCommand("SET", "k-\(index)", "\(index)"), RedisCommand("GET", "k-\(index)")])
            #expect(replies == [.simpleString("OK"), .bulk(Array("\(index)".utf8))])
        }
    }
}
