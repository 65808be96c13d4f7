import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerRedis

/// The Redis flow store: single use across replicas, TTLs from the flow's expiry, and the file store's record format.
struct RedisFlowStoreTests {
    /// A flow with every field set.
    static func makeFlow(state: String = PendingFlow.randomState(), lifetime: TimeInterval = 600) -> PendingFlow {
        var flow = PendingFlow.make(state: state, lifetime: lifetime)
        flow.requestToken = "request-token"
        flow.requestTokenSecret = Secret("request-secret-SENTINEL")
        flow.endUser = EndUser(id: "user-42", email: "ada@example.com", name: "Ada")
        flow.tags = ["plan": "pro"]
        flow.connect = ConnectContext(
            stage: .flow, origin: "https://app.example.com", allowedProviders: ["acme"], reconnectAccountID: "acme:1",
            scopes: ["read"])
        return flow
    }

    @Test func aFlowCanBeTakenOnceWithEveryField() async throws {
        try await RedisServer.with { server async throws in
            let store = RedisFlowStore(client: server.client(), now: { .fixture })
            let flow = Self.makeFlow()
            try await store.put(flow)
            #expect(try await store.take(state: flow.state, now: .fixture) == flow)
            #expect(try await store.take(state: flow.state, now: .fixture) == nil)
            #expect(try await store.take(state: PendingFlow.randomState(), now: .fixture) == nil)
        }
    }

    @Test func anOpenIDNonceIsKeptAndAFlowOfThePreviousFormatIsReadWithoutOne() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let store = RedisFlowStore(client: client, now: { .fixture })
            var flow = Self.makeFlow()
            flow.nonce = Secret("nonce-SENTINEL-0123456789")
            try await store.put(flow)
            #expect(try await store.take(state: flow.state, now: .fixture)?.nonce == flow.nonce)
            // A record exactly as the previous version wrote it: no nonce member.
            let state = PendingFlow.randomState()
            let previous =
                #"{"binding":"api","code_verifier":"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk","created_at":"2026-12-01T08:00:00Z","#
                + #""expires_at":"2099-12-01T08:10:00Z","provider":"google","state":"\#(state)","version":1}"#
            _ = try await client.command("SET", "tb:flow:\(state)", previous)
            let taken = try #require(try await store.take(state: state, now: .fixture))
            #expect(taken.provider == "google" && taken.nonce == nil && taken.codeVerifier != nil)
            #expect(taken.endUser == nil && taken.tags.isEmpty)
        }
    }

    @Test func aLookAlikeStateTakesNothing() async throws {
        try await RedisServer.with { server async throws in
            try await FlowStoreConformance.lookAlikeStateTakesNothing { RedisFlowStore(client: server.client(), now: { .fixture }) }
        }
    }

    @Test func twentyConcurrentTakesAcrossTwoReplicasYieldExactlyOne() async throws {
        try await RedisServer.with { server async throws in
            let replicas = [
                RedisFlowStore(client: server.client(), now: { .fixture }),
                RedisFlowStore(client: server.client(), now: { .fixture }),
            ]
            for round in 0..<10 {
                let flow = Self.makeFlow()
                try await replicas[round % 2].put(flow)
                let taken = try await withThrowingTaskGroup(of: PendingFlow?.self) { group in
                    for index in 0..<20 {
                        let replica = replicas[index % 2]
                        group.addTask { try await replica.take(state: flow.state, now: .fixture) }
                    }
                    return try await group.reduce(into: [PendingFlow]()) { winners, result in
                        if let result { winners.append(result) }
                    }
                }
                #expect(taken == [flow], "round \(round)")
            }
        }
    }

    @Test func theTTLRunsToTheFlowsExpiry() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let store = RedisFlowStore(client: client, now: { Date.fixture.addingTimeInterval(100) })
            let flow = Self.makeFlow(lifetime: 600)
            try await store.put(flow)
            let remaining = try #require(try await client.command("PTTL", "tb:flow:\(flow.state)").integer)
            // 500 s from the injected clock (not the flow's 600 s lifetime); the slack, a minute, is the wall time
            // between SET and PTTL on a loaded machine.
            #expect((440_000...500_000).contains(remaining), "PTTL \(remaining)")
        }
    }

    @Test func expiredFlowsVanishByTheirTTL() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let store = RedisFlowStore(client: client)
            let start = Date()
            let flow = PendingFlow(
                state: PendingFlow.randomState(), provider: "github", binding: "b", createdAt: start,
                expiresAt: start.addingTimeInterval(1.0))
            try await store.put(flow)
            let ttl = try #require(try await client.command("PTTL", "tb:flow:\(flow.state)").integer)
            #expect((1...1_000).contains(ttl) || ttl == -2, "PTTL \(ttl): set to the flow's expiry, or already gone")
            let gone = try await eventually(interval: 0.05) {
                try await client.command("EXISTS", "tb:flow:\(flow.state)") == .integer(0)
            }
            #expect(gone, "the key outlived its 1 s TTL by a minute")
            #expect(try await store.take(state: flow.state, now: Date()) == nil)
        }
    }

    @Test func aFlowTakenAfterItsExpiryIsNilAndGone() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let store = RedisFlowStore(client: client, now: { .fixture })
            let flow = Self.makeFlow(lifetime: 60)
            try await store.put(flow)
            #expect(try await store.take(state: flow.state, now: Date.fixture.addingTimeInterval(60)) == nil)
            #expect(try await client.command("EXISTS", "tb:flow:\(flow.state)") == .integer(0))
        }
    }

    @Test func aFlowAlreadyExpiredIsNotStored() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let store = RedisFlowStore(client: client, now: { Date.fixture.addingTimeInterval(601) })
            try await store.put(Self.makeFlow(lifetime: 600))
            #expect(try await client.command("DBSIZE") == .integer(0))
        }
    }

    @Test func malformedStatesAreRefusedOnPutAndAbsentOnTake() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let store = RedisFlowStore(client: client, now: { .fixture })
            for state in [
                "short", String(repeating: "a", count: 129), "has space in the state!", "dot.dot.dot.dot.dot", "ünïcödé-state-1234567",
            ] {
                await #expect(throws: StoreError.self, "\(state)") { try await store.put(Self.makeFlow(state: state)) }
                #expect(try await store.take(state: state, now: .fixture) == nil)
            }
            #expect(try await client.command("DBSIZE") == .integer(0))
        }
    }

    @Test func aSecondFlowWithTheSameStateIsRefused() async throws {
        try await RedisServer.with { server async throws in
            let store = RedisFlowStore(client: server.client(), now: { .fixture })
            let flow = Self.makeFlow()
            try await store.put(flow)
            var impostor = flow
            impostor.returnTo = "https://evil.example/"
            await #expect(throws: StoreError.unavailable("put flow: a pending flow with this state already exists")) {
                try await store.put(impostor)
            }
            #expect(try await store.take(state: flow.state, now: .fixture) == flow)
        }
    }

    @Test func aRecordThatDoesNotParseIsCorruptAndUsedUp() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let store = RedisFlowStore(client: client, now: { .fixture })
            let state = PendingFlow.randomState()
            _ = try await client.command("SET", "tb:flow:\(state)", "{not json")
            await #expect(throws: StoreError.corrupt(path: "redis key tb:flow:\(state)", reason: "not valid JSON (truncated or damaged)")) {
                _ = try await store.take(state: state, now: .fixture)
            }
            #expect(try await client.command("EXISTS", "tb:flow:\(state)") == .integer(0))
        }
    }

    @Test func recordsAreInterchangeableWithTheFileFlowStore() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let store = RedisFlowStore(client: client, now: { .fixture })
            let directory = NSTemporaryDirectory() + "/broker-redis-flows-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let files = try JSONFileFlowStore(directory: directory)

            let fromRedis = Self.makeFlow()
            try await store.put(fromRedis)
            let redisBytes = try #require(try await client.command("GET", "tb:flow:\(fromRedis.state)").bytes)
            try Data(redisBytes).write(to: URL(fileURLWithPath: files.flowsDirectory + "/\(fromRedis.state).json"))
            #expect(try await files.take(state: fromRedis.state, now: .fixture) == fromRedis)

            let fromFile = Self.makeFlow()
            try await files.put(fromFile)
            let fileBytes = try Data(contentsOf: URL(fileURLWithPath: files.flowsDirectory + "/\(fromFile.state).json"))
            _ = try await client.command(
                RedisCommand(bytes: [Array("SET".utf8), Array("tb:flow:\(fromFile.state)".utf8), Array(fileBytes)]))
            #expect(try await store.take(state: fromFile.state, now: .fixture) == fromFile)
        }
    }

    @Test func storageFailuresAreUnavailable() async throws {
        try await Loopback.withRefusingPort { port in
            let store = RedisFlowStore(client: RedisClient(url: RedisURL(host: "127.0.0.1", port: port)), now: { .fixture })
            let error = await #expect(throws: StoreError.self) { try await store.put(Self.makeFlow()) }
            #expect(error.map { "\($0)".contains("Connection refused") } == true, "\(String(describing: error))")
            await #expect(throws: StoreError.self) { _ = try await store.take(state: PendingFlow.randomState(), now: .fixture) }
        }
    }
}
