import BrokerCore
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerRedis

/// The shared refresh backoff on a real redis-server: what is stored, how it expires, and two replicas under one rate limit.
struct RedisRefreshBackoffStoreTests {
    static let tokenURL = "https://oauth2.googleapis.com/token"
    static let environment = ["GOOGLE_CLIENT_ID": "google-id.apps.googleusercontent.com", "GOOGLE_CLIENT_SECRET": "google-secret-SENTINEL"]

    @Test func aBackoffIsStoredUnderThePrefixWithoutSecretsAndExpiresAfterItsEndPlusTheMargin() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let store = RedisRefreshBackoffStore(client: client, keep: 300)
            let state = RefreshBackoff(
                failures: 2, notBefore: Date.fixture.addingTimeInterval(120),
                lastError: .upstreamError(step: "token_refresh", reason: "HTTP 429 (not a 2xx status)"))
            #expect(try await store.backoff(for: "google:1") == nil)
            let recorded = ContinuousClock.now
            try await store.record(state, for: "google:1", at: Date.fixture)
            #expect(try await store.backoff(for: "google:1") == state)
            let ttl = try #require(try await client.command("PTTL", "tb:backoff:google:1").integer)
            // 120 s to its end plus the 300 s margin, less what passed since the record began (a loaded machine may
            // take seconds between the two commands): never more, and not less than that by more than a second.
            let passed = (ContinuousClock.now - recorded).components
            let passedMS = Int(passed.seconds) * 1000 + Int(passed.attoseconds / 1_000_000_000_000_000) + 1
            #expect(ttl <= 420_000 && ttl >= 420_000 - passedMS - 1_000, "PTTL \(ttl) after \(passedMS) ms")
            let raw = try #require(try await client.command("GET", "tb:backoff:google:1").string)
            #expect(!raw.contains("SENTINEL") && raw.contains("token_refresh"))
            try await store.clear(accountID: "google:1")
            #expect(try await client.command("EXISTS", "tb:backoff:google:1").integer == 0)
        }
    }

    @Test func aDamagedValueReadsAsNoBackoff() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            _ = try await client.command("SET", "tb:backoff:google:1", "{\"failures\":\"lots\"")
            #expect(try await RedisRefreshBackoffStore(client: client).backoff(for: "google:1") == nil)
        }
    }

    @Test func takeReturnsTheBackoffWithItsFirstFailureAndDeletesIt() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let store = RedisRefreshBackoffStore(client: client)
            let state = RefreshBackoff(
                failures: 3, notBefore: Date.fixture.addingTimeInterval(40), lastError: .upstreamTimeout(step: "token_refresh"),
                firstFailureAt: Date.fixture.addingTimeInterval(-60))
            try await store.record(state, for: "google:1", at: Date.fixture)
            #expect(try await store.backoff(for: "google:1") == state)
            #expect(try await store.take(accountID: "google:1") == state)
            #expect(try await client.command("EXISTS", "tb:backoff:google:1").integer == 0)
            #expect(try await store.take(accountID: "google:1") == nil)
            // A value an earlier version wrote, without the first failure's time, still reads.
            _ = try await client.command(
                "SET", "tb:backoff:google:2",
                #"{"error":"upstream_timeout","failures":2,"not_before_ms":1796025600000,"step":"token_refresh"}"#)
            let old = try #require(try await store.backoff(for: "google:2"))
            #expect(old.failures == 2 && old.firstFailureAt == nil)
        }
    }

    @Test func fiftyReadsOnTwoReplicasWithinTheCooldownMakeOneProviderCall() async throws {
        try await RedisServer.with { server async throws in
            let world = try await ReplicaWorld.make(server: server)
            world.upstream.answer(status: 503, retryAfter: nil)
            let replicas = [world.replica(), world.replica()]
            let seeded = try await world.seedExpired()
            var errors: [String] = []
            // 24.5 s of reads, alternating replicas: the first failure's own backoff (10 s) is raised to the shared 30 s cooldown.
            for round in 0..<50 {
                let error = await refusal { try await replicas[round % 2].account(id: seeded.accountID) }
                errors.append(error?.code ?? "none")
                world.clock.advance(0.5)
            }
            #expect(errors == Array(repeating: "upstream_error", count: 50))
            #expect(world.upstream.calls == 1)
            world.clock.advance(5.5)
            _ = await refusal { try await replicas[1].account(id: seeded.accountID) }
            #expect(world.upstream.calls == 2)
        }
    }

    @Test func oneReplicaGivesUpAndTheOtherServesTheExhaustedStatusWithoutACallUntilForced() async throws {
        try await RedisServer.with { server async throws in
            let world = try await ReplicaWorld.make(server: server)
            world.upstream.answer(status: 503, retryAfter: nil)
            let replicas = [world.replica(giveUp: 3600), world.replica(giveUp: 3600)]
            let seeded = try await world.seedExpired()
            // Reads on alternate replicas every 300 s: the run that began at the first failure lasts its hour at the 13th.
            var codes: [String] = []
            for round in 0..<13 {
                codes.append(await refusal { try await replicas[round % 2].account(id: seeded.accountID) }?.code ?? "none")
                world.clock.advance(300)
            }
            #expect(codes == Array(repeating: "upstream_error", count: 12) + ["refresh_exhausted"])
            #expect(world.upstream.calls == 13)
            #expect(try await server.client().command("EXISTS", "tb:backoff:\(seeded.id)").integer == 0)
            #expect(try await replicas[1].stored(id: seeded.accountID)?.status == .refreshExhausted)
            #expect(try await replicas[1].statusCounts()?.refreshExhausted == 1)
            for replica in replicas {
                #expect(await refusal { try await replica.account(id: seeded.accountID) } == .refreshExhausted)
            }
            #expect(world.upstream.calls == 13)
            // Forced on the other replica, with the provider back: active again.
            world.upstream.answer(status: 200, retryAfter: nil)
            #expect(try await replicas[1].refreshNow(id: seeded.accountID).accessToken.value == "ya29.after")
            #expect(try await replicas[0].account(id: seeded.accountID).status == .active)
            #expect(world.upstream.calls == 14)
        }
    }

    @Test func twoReplicasSharingRedisMakeOneProviderCallPerBackoffWindow() async throws {
        try await RedisServer.with { server async throws in
            let world = try await ReplicaWorld.make(server: server)
            world.upstream.answer(status: 429, retryAfter: "120")
            let replicas = [world.replica(), world.replica()]
            let seeded = try await world.seedExpired()
            var errors: [String] = []
            for round in 0..<20 {
                let error = await refusal { try await replicas[round % 2].account(id: seeded.accountID) }
                errors.append(error?.code ?? "none")
                world.clock.advance(5)
            }
            #expect(errors == Array(repeating: "upstream_error", count: 20))
            // 100 s of reads on two replicas: one call, and both replicas know when the next try is.
            #expect(world.upstream.calls == 1)
            for replica in replicas {
                #expect(await replica.retryAfter(accountID: seeded.accountID) == 20)
            }
            world.upstream.answer(status: 200, retryAfter: nil)
            world.clock.advance(20)
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<10 { group.addTask { try await replicas[index % 2].account(id: seeded.accountID).accessToken.value } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens == ["ya29.after"])
            #expect(world.upstream.calls == 2)
            #expect(try await server.client().command("EXISTS", "tb:backoff:\(seeded.id)").integer == 0)
        }
    }

    /// Decision under test: a backoff that cannot be read never blocks refreshes; this replica's own last record stands in.
    @Test func whenTheBackoffCannotBeReadThisReplicasOwnRecordStandsIn() async throws {
        try await RedisServer.with { server async throws in
            let world = try await ReplicaWorld.make(server: server)
            world.upstream.answer(status: 503, retryAfter: "60")
            let seeded = try await world.seedExpired()
            // Accounts and the lock stay reachable; only the backoff's Redis is gone.
            let dead = try await RedisServer.start()
            let unreachable = RedisRefreshBackoffStore(client: dead.client(timeout: 0.5))
            await dead.stop()
            let service = world.replica(backoff: unreachable)
            #expect(await refusal { try await service.account(id: seeded.accountID) }?.code == "upstream_error")
            #expect(world.upstream.calls == 1)
            world.clock.advance(30)
            #expect(await refusal { try await service.account(id: seeded.accountID) }?.code == "upstream_error")
            #expect(world.upstream.calls == 1)
            world.upstream.answer(status: 200, retryAfter: nil)
            world.clock.advance(30)
            #expect(try await service.account(id: seeded.accountID).accessToken.value == "ya29.after")
            #expect(world.upstream.calls == 2)
        }
    }
}

/// Two or more brokers on one redis-server: shared accounts, lock and backoff, one fake provider and one hand-moved clock.
struct ReplicaWorld {
    let server: RedisServer
    let registry: ProviderRegistry
    let upstream: CountingProvider
    let clock: HandClock

    static func make(server: RedisServer) async throws -> ReplicaWorld {
        let registry = try ProviderRegistry.load(environment: RedisRefreshBackoffStoreTests.environment, providersFile: nil)
        await GoogleOpenID.discover(in: registry)
        return ReplicaWorld(server: server, registry: registry, upstream: CountingProvider(), clock: HandClock())
    }

    /// One broker replica with its own Redis client, as a separate process would have; `backoff` replaces the shared one.
    func replica(backoff: (any RefreshBackoffStore)? = nil, giveUp: TimeInterval = RefreshCoordinator.Policy.defaultGiveUp)
        -> AccountService
    {
        let client = server.client()
        return AccountService(
            accounts: RedisAccountRepository(client: client), registry: registry, upstream: upstream,
            redirectURI: "https://broker.example/callback", now: clock.function,
            refreshPolicy: RefreshCoordinator.Policy(lockTTL: 30, pollInterval: 0.01, giveUp: giveUp),
            refreshLock: RedisLock(client: client), refreshBackoff: backoff ?? RedisRefreshBackoffStore(client: client))
    }

    /// A Google account whose token expired a second ago.
    func seedExpired() async throws -> Account {
        var account = Account.make(provider: "google", uid: "110169484474386276334", accessToken: "ya29.before-SENTINEL")
        account.refreshToken = Secret("1//refresh-SENTINEL")
        account.expiresAt = clock.now.addingTimeInterval(-1)
        try await RedisAccountRepository(client: server.client()).put(account)
        return account
    }
}

/// A token endpoint that answers every refresh the same way and counts the calls.
final class CountingProvider: UpstreamClient {
    private let state = Mutex<(calls: Int, status: Int, retryAfter: String?)>((0, 200, nil))

    var calls: Int { state.withLock { $0.calls } }

    /// From now on, answers with `status` (200: a new token) and `retryAfter` when given.
    func answer(status: Int, retryAfter: String?) {
        state.withLock {
            $0.status = status; $0.retryAfter = retryAfter
        }
    }

    func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        let (status, retryAfter) = state.withLock { s in
            s.calls += 1
            return (s.status, s.retryAfter)
        }
        var headers = [("Content-Type", "application/json")]
        if let retryAfter { headers.append(("Retry-After", retryAfter)) }
        let body = status == 200 ? #"{"access_token":"ya29.after","expires_in":3600,"token_type":"Bearer"}"# : #"{"error":"rate_limited"}"#
        return UpstreamResponse(status: status, headers: headers, body: Array(body.utf8))
    }
}

/// A wall clock the test moves by hand.
final class HandClock: Sendable {
    private let current = Mutex(Date.fixture)
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var function: @Sendable () -> Date { { [self] in now } }
}

/// The broker error `body` throws, or nil when it returns.
func refusal<T>(_ body: () async throws -> T) async -> BrokerError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? BrokerError
    }
}
