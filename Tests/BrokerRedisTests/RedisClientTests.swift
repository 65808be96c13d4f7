import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerRedis

/// The RESP2 client against a real `redis-server`: commands, binary values, AUTH, SELECT, pipelining and errors.
struct RedisClientTests {
    @Test func runsCommandsAndReportsErrorRepliesAsServerErrors() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            #expect(try await client.command("SET", "greeting", "hello") == .simpleString("OK"))
            #expect(try await client.command("GET", "greeting").string == "hello")
            #expect(try await client.command("GET", "missing") == .bulk(nil))
            #expect(try await client.command("INCR", "counter") == .integer(1))
            #expect(await client.ping())
            await #expect(throws: RedisError.server("ERR unknown command 'NOSUCHCOMMAND', with args beginning with: 'x' ")) {
                try await client.command("NOSUCHCOMMAND", "x")
            }
            let wrongType = await #expect(throws: RedisError.self) { try await client.command("INCR", "greeting") }
            #expect(wrongType == .server("ERR value is not an integer or out of range"))
            // An error reply leaves the connection usable.
            #expect(try await client.command("GET", "greeting").string == "hello")
        }
    }

    @Test func storesAndReturnsEveryByteValue() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let value = (0...255).map(UInt8.init) + Array("\r\n*1\r\n$-1\r\n".utf8) + [0, 0]
            let key = Array("bin\r\nkey\0".utf8)
            #expect(try await client.command(RedisCommand(bytes: [Array("SET".utf8), key, value])) == .simpleString("OK"))
            #expect(try await client.command(RedisCommand(bytes: [Array("GET".utf8), key])) == .bulk(value))
            #expect(try await client.command(RedisCommand(bytes: [Array("STRLEN".utf8), key])) == .integer(value.count))
        }
    }

    @Test func authenticatesWithThePasswordFromTheURL() async throws {
        try await RedisServer.with(password: "SENTINEL-pass") { server async throws in
            let anonymous = RedisClient(url: server.url())
            let refused = await #expect(throws: RedisError.self) { try await anonymous.command("PING") }
            #expect(refused.map { "\($0)".contains("NOAUTH") } == true, "\(String(describing: refused))")

            let right = RedisClient(url: server.url(password: "SENTINEL-pass"))
            #expect(try await right.command("PING") == .simpleString("PONG"))
            // The two-argument form, AUTH <user> <password>, with the ACL user `default`.
            let named = RedisClient(url: server.url(username: "default", password: "SENTINEL-pass"))
            #expect(try await named.command("SET", "k", "v") == .simpleString("OK"))

            let wrong = RedisClient(url: server.url(password: "SENTINEL-wrong"))
            let error = await #expect(throws: RedisError.self) { try await wrong.command("PING") }
            guard case .unavailable(let message)? = error else {
                Issue.record("expected unavailable, got \(String(describing: error))")
                return
            }
            #expect(message.contains("refused AUTH") && message.contains("WRONGPASS"), "\(message)")
            #expect(!message.contains("SENTINEL"))
            #expect(await wrong.ping() == false)
        }
    }

    @Test func selectKeepsDatabasesApart() async throws {
        try await RedisServer.with { server async throws in
            let one = server.client(database: 1)
            let two = server.client(database: 2)
            _ = try await one.command("SET", "shared-name", "in db 1")
            _ = try await two.command("SET", "shared-name", "in db 2")
            #expect(try await one.command("GET", "shared-name").string == "in db 1")
            #expect(try await two.command("GET", "shared-name").string == "in db 2")
            #expect(try await server.client().command("DBSIZE") == .integer(0))
            let outOfRange = RedisClient(url: server.url(database: 999))
            let error = await #expect(throws: RedisError.self) { try await outOfRange.command("PING") }
            #expect(error.map { "\($0)".contains("refused SELECT") } == true, "\(String(describing: error))")
        }
    }

    @Test func pipelinesAThousandCommandsInOneExchange() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client(poolSize: 1)
            #expect(await client.ping())
            let connection = client.pool.connections[0]
            let before = await connection.exchangeCount()
            let replies = try await client.pipeline(Array(repeating: ["INCR", "pipelined"], count: 1000))
            #expect(await connection.exchangeCount() - before == 1)
            #expect(replies == (1...1000).map { RESPValue.integer($0) })
        }
    }

    @Test func anErrorInAPipelineStaysInItsPlace() async throws {
        try await RedisServer.with { server async throws in
            let replies = try await server.client().pipeline([["SET", "k", "text"], ["INCR", "k"], ["GET", "k"]])
            #expect(replies.count == 3)
            #expect(replies[0] == .simpleString("OK"))
            #expect(replies[1].errorMessage?.hasPrefix("ERR value is not an integer") == true)
            #expect(replies[2].string == "text")
        }
    }

    @Test func manyTasksShareASmallPool() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client(poolSize: 2)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        _ = try await client.pipeline([["INCR", "total"], ["SET", "key-\(index)", "\(index)"]])
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await client.command("GET", "total").string == "200")
            #expect(try await client.command("GET", "key-137").string == "137")
        }
    }

    @Test func aServerThatNeverAnswersTimesOutAndThenFailsFast() async throws {
        let listener = try FakeRedisListener()
        defer { listener.close() }
        let gate = RedisReconnectGate(now: { 1_000_000_000 })
        let client = RedisClient(url: RedisURL(host: "127.0.0.1", port: listener.port), poolSize: 2, timeout: 0.3, gate: gate)
        await #expect(throws: RedisError.timeout) { try await client.command("PING") }
        // Every connection would hang the same way: the next call does not wait again.
        await #expect(
            throws: RedisError.unavailable(
                "redis at 127.0.0.1:\(listener.port) did not answer within 0.3 s; next connect to 127.0.0.1:\(listener.port) in 50 ms")
        ) {
            try await client.command("PING")
        }
    }

    @Test func bytesThatAreNotRESPAreAProtocolError() async throws {
        let listener = try FakeRedisListener(reply: Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8))
        defer { listener.close() }
        let client = RedisClient(url: RedisURL(host: "127.0.0.1", port: listener.port), timeout: 30)
        let error = await #expect(throws: RedisError.self) { try await client.command("PING") }
        #expect(error == .protocolError("unexpected type byte 0x48: not a RESP2 reply (is this a Redis server?)"))
    }

    @Test func aClosedPortIsUnavailableAndTheNextCallFailsFast() async throws {
        try await Loopback.withRefusingPort { port in
            // A backoff clock that stands still: the second call is inside the first wait however slow this machine is.
            let gate = RedisReconnectGate(now: { 1_000_000_000 })
            let client = RedisClient(url: RedisURL(host: "127.0.0.1", port: port), poolSize: 2, timeout: 30, gate: gate)
            let first = await #expect(throws: RedisError.self) { try await client.command("PING") }
            #expect(first == .unavailable("connect to 127.0.0.1:\(port): Connection refused"))
            let second = await #expect(throws: RedisError.self) { try await client.command("PING") }
            guard case .unavailable(let message)? = second else {
                Issue.record("expected unavailable, got \(String(describing: second))")
                return
            }
            #expect(message == "connect to 127.0.0.1:\(port): Connection refused; next connect to 127.0.0.1:\(port) in 50 ms")
        }
    }

    @Test func anUnknownHostIsUnavailable() async throws {
        let client = RedisClient(url: RedisURL(host: "no-such-host.invalid", port: 6379), timeout: 30)
        let error = await #expect(throws: RedisError.self) { try await client.command("PING") }
        #expect(error.map { "\($0)".contains("cannot resolve no-such-host.invalid") } == true, "\(String(describing: error))")
    }

    @Test func waitingOnRedisNeverOccupiesTheCooperativePool() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client(poolSize: 8)
            try await RedisClientRecoveryTests.useEveryConnection(of: client)
            let order = EventLog()
            // Eight commands held unanswered until the probe ran: more than this machine has cooperative threads.
            server.pause()
            defer { server.resume() }
            let held = (0..<8).map { _ in
                Task {
                    _ = try await client.command("INCR", "n")
                    order.append("redis")
                }
            }
            #expect(await eventually { server.connectionsWithUnreadBytes() == 8 }, "all eight commands sent")
            await withTaskGroup(of: Int.self) { group in
                for seed in 0..<16 {
                    group.addTask {
                        await Task.yield()
                        return (0..<1000).reduce(seed, &+)
                    }
                }
                await group.waitForAll()
            }
            order.append("probe")
            server.resume()
            for task in held { try await task.value }
            #expect(order.entries.first == "probe", "async work waited for Redis: \(order.entries)")
            #expect(try await client.command("GET", "n").string == "8")
        }
    }
}

/// A client never writes to a replica: a primary demoted under it (READONLY) closes the connection and fails as unavailable.
struct RedisReplicaRefusalTests {
    @Test func aWriteRefusedWithReadOnlyFailsAsUnavailableAndReconnects() async throws {
        try await RedisServer.with { primary async throws in
            let replica = try await RedisServer.start(arguments: ["--replicaof", "127.0.0.1", String(primary.port)])
            defer { Task { await replica.stop() } }
            let client = RedisClient(url: replica.url(), poolSize: 1)
            #expect(try await client.command("GET", "k") == .bulk(nil))
            let error = await #expect(throws: RedisError.self) { try await client.command("SET", "k", "v") }
            guard case .unavailable(let message)? = error else {
                Issue.record("expected unavailable, got \(String(describing: error))")
                return
            }
            #expect(message.contains("is a replica now") && message.contains("READONLY"), "\(message)")
            // In a transaction too: the refusal at queueing aborts EXEC, and nothing reaches the replica.
            let repository = RedisAccountRepository(client: client)
            await #expect(throws: StoreError.self) { try await repository.put(Account.make(uid: "replica")) }
            #expect(try await client.command("EXISTS", "tb:account:github:replica") == .integer(0))
        }
    }

    @Test func aTransactionNoReplicaConfirmsIsNotAcknowledged() async throws {
        try await RedisServer.with { server async throws in
            // A single server asked for one replica: the write is applied but refused as unacknowledged.
            let client = RedisClient(location: .server(server.url()), poolSize: 1, minimumReplicas: 1)
            let repository = RedisAccountRepository(client: client)
            let error = await #expect(throws: StoreError.self) { try await repository.put(Account.make(uid: "alone")) }
            #expect("\(String(describing: error))".contains("0 of 1 replicas confirmed"))
            #expect(client.metrics.snapshot().unreplicatedWrites == 1)
        }
    }
}
