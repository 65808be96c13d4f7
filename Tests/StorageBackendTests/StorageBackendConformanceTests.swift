import BrokerCore
import BrokerFileStore
import BrokerPostgres
import BrokerRedis
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

/// Opens a back end on one backing store; calling it again opens the same store again (a restart, or another replica).
typealias BackendOpener = @Sendable () throws -> any StorageBackend

/// One storage back end the suites run against.
struct Backend: Sendable, CustomTestStringConvertible {
    /// Its name in test results.
    let name: String
    /// Whether its accounts count themselves by status (``StorageBackend/statusCounting``).
    let countsAccounts: Bool
    /// Whether the store drops expired flows by itself (Redis TTLs), so ``FlowStore/purgeExpired(now:)`` has nothing to do.
    var expiresFlowsItself = false
    /// Runs `body` with an opener of a fresh, empty store, removed afterwards.
    let scope: @Sendable ((@escaping BackendOpener) async throws -> Void) async throws -> Void

    var testDescription: String { name }

    /// Every back end: a new one passes the suites by implementing ``StorageBackend`` and adding one line here.
    static let all: [Backend] = [.files, .redis, .redisTLS, .postgres, .memory]

    /// The data directory's files, in a temporary directory.
    static let files = Backend(name: "files", countsAccounts: true) { body in
        try await TemporaryDirectory.with { directory in
            try await body { try FileStorageBackend(directory: directory, webhooks: true, now: { .fixture }) }
        }
    }

    /// A real redis-server on a free port, stopped afterwards.
    static let redis = Backend(name: "redis", countsAccounts: true, expiresFlowsItself: true) { body in
        try await RedisServer.with { server in
            try await body { RedisStorageBackend(client: server.client(), webhooks: true, now: { .fixture }) }
        }
    }

    /// A real redis-server that speaks only TLS and requires a client certificate, reached with `rediss://`.
    static let redisTLS = Backend(name: "redis over TLS", countsAccounts: true, expiresFlowsItself: true) { body in
        try await RedisServer.withTLS { server, tls async throws in
            try await body {
                RedisStorageBackend(
                    client: RedisClient(url: server.tlsURL(settings: tls.client), timeout: 30), webhooks: true, now: { .fixture })
            }
        }
    }

    /// A real PostgreSQL server shared by the suite, with a database of its own for this test, migrated first.
    static let postgres = Backend(name: "postgres", countsAccounts: true) { body in
        try await SharedPostgresServer.withDatabase { configuration in
            let migrator = try PostgresClient(configuration: configuration)
            try await PostgresSchema.migrate(migrator)
            await migrator.close()
            // Each open is a new client, as a restart or another replica would make; all are closed at the end.
            let clients = Mutex<[PostgresClient]>([])
            let outcome: Result<Void, any Error>
            do {
                try await body {
                    let client = try PostgresClient(configuration: configuration)
                    clients.withLock { $0.append(client) }
                    return PostgresStorageBackend(client: client, webhooks: true, now: { .fixture })
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            for client in clients.withLock({ $0 }) { await client.close() }
            try outcome.get()
        }
    }

    /// ``redis`` with this replica's account cache on (``CachingRedisAccountRepository``), started at each open.
    static let redisCached = Backend(name: "redis, cached", countsAccounts: true, expiresFlowsItself: true) { body in
        try await RedisServer.with { server in
            try await started(body) {
                RedisStorageBackend(client: server.client(), cacheCapacity: 1_000, webhooks: true, now: { .fixture })
            }
        }
    }

    /// ``postgres`` with this replica's account cache on (``CachingPostgresAccountRepository``), started at each open.
    static let postgresCached = Backend(name: "postgres, cached", countsAccounts: true) { body in
        try await SharedPostgresServer.withDatabase { configuration in
            let migrator = try PostgresClient(configuration: configuration)
            try await PostgresSchema.migrate(migrator)
            await migrator.close()
            let clients = Mutex<[PostgresClient]>([])
            let outcome: Result<Void, any Error>
            do {
                try await started(body) {
                    let client = try PostgresClient(configuration: configuration)
                    clients.withLock { $0.append(client) }
                    return PostgresStorageBackend(client: client, webhooks: true, cacheCapacity: 1_000, now: { .fixture })
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            for client in clients.withLock({ $0 }) { await client.close() }
            try outcome.get()
        }
    }

    /// Runs `body` with an opener that starts each back end `make` opens (a cache's listening session), stopping all
    /// of them afterwards.
    private static func started(
        _ body: (@escaping BackendOpener) async throws -> Void, _ make: @escaping @Sendable () throws -> any StorageBackend
    ) async throws {
        let opened = Mutex<[any StorageBackend]>([])
        let outcome: Result<Void, any Error>
        do {
            try await body {
                let backend = try make()
                backend.start()
                opened.withLock { $0.append(backend) }
                return backend
            }
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        for backend in opened.withLock({ $0 }) { backend.stop() }
        try outcome.get()
    }

    /// This process's memory: every open hands out the same back end.
    static let memory = Backend(name: "memory", countsAccounts: false) { body in
        let backend = InMemoryStorageBackend(now: { .fixture })
        try await body { backend }
    }
}

/// The behaviour every ``StorageBackend`` shows, member by member, on every back end of ``Backend/all``.
enum StorageBackendConformanceTests {
    /// ``StorageBackend/accounts``: the repository suite.
    struct Accounts {
        private func check(_ backend: Backend, _ suite: (RepositoryOpener) async throws -> Void) async throws {
            try await backend.scope { open in try await suite { try open().accounts } }
        }

        @Test(arguments: Backend.all) func putGetListDelete(_ backend: Backend) async throws {
            try await check(backend, AccountRepositoryConformance.putGetListDelete)
        }
        @Test(arguments: Backend.all) func reauthorizationUpdatesSameRecord(_ backend: Backend) async throws {
            try await check(backend, AccountRepositoryConformance.reauthorizationUpdatesSameRecord)
        }
        @Test(arguments: Backend.all) func listFiltersByProviderSortedByID(_ backend: Backend) async throws {
            try await check(backend, AccountRepositoryConformance.listFiltersByProviderSortedByID)
        }
        @Test(arguments: Backend.all) func concurrentUpdatesAreNotLost(_ backend: Backend) async throws {
            try await check(backend, AccountRepositoryConformance.concurrentUpdatesAreNotLost)
        }
        @Test(arguments: Backend.all) func concurrentPutsSurviveRestart(_ backend: Backend) async throws {
            try await check(backend, AccountRepositoryConformance.concurrentPutsSurviveRestart)
        }
        @Test(arguments: Backend.all) func restartPreservesEveryField(_ backend: Backend) async throws {
            try await check(backend, AccountRepositoryConformance.restartPreservesEveryField)
        }
        @Test(arguments: Backend.all) func pageFiltersAndPages(_ backend: Backend) async throws {
            try await check(backend, AccountRepositoryConformance.pageFiltersAndPages)
        }
        @Test(arguments: Backend.all) func pagingUnderConcurrentInserts(_ backend: Backend) async throws {
            try await check(backend, AccountRepositoryConformance.pagingUnderConcurrentInserts)
        }
        @Test(arguments: Backend.all) func updateEdgeCases(_ backend: Backend) async throws {
            try await check(backend, AccountRepositoryConformance.updateEdgeCases)
        }
        @Test(arguments: Backend.all) func canonicallyEquivalentIDsAreDistinct(_ backend: Backend) async throws {
            try await check(backend, AccountRepositoryConformance.canonicallyEquivalentIDsAreDistinct)
        }
        @Test(arguments: Backend.all) func longestUIDsAreStorable(_ backend: Backend) async throws {
            try await check(backend, AccountRepositoryConformance.longestUIDsAreStorable)
        }
        @Test(arguments: Backend.all.filter(\.countsAccounts)) func statusCountsFollowWrites(_ backend: Backend) async throws {
            try await check(backend, AccountRepositoryConformance.statusCountsFollowWrites)
        }

        /// A back end that says it counts accounts offers the counting; one that does not offers none.
        @Test(arguments: Backend.all) func statusCountingIsOfferedAsDeclared(_ backend: Backend) async throws {
            try await backend.scope { open in
                let storage = try open()
                #expect((storage.statusCounting != nil) == backend.countsAccounts)
            }
        }
    }

    /// ``AccountRepository/immediateReading``, on the back ends that read from memory: the files, and Redis and
    /// PostgreSQL with their caches on.
    struct ImmediateReading {
        @Test(arguments: [Backend.files, .redisCached, .postgresCached])
        func heldNowIsTheAccountGetNowHandsOut(_ backend: Backend) async throws {
            try await backend.scope { open in
                #expect(try open().accounts.immediateReading != nil)
                try await AccountRepositoryConformance.heldNowIsTheAccountGetNowHandsOut { try open().accounts }
            }
        }
    }

    /// ``StorageBackend/flows`` and ``StorageBackend/flowOutcomes``.
    struct FlowsAndOutcomes {
        private func check(_ backend: Backend, _ suite: (FlowStoreOpener) async throws -> Void) async throws {
            try await backend.scope { open in try await suite { try open().flows } }
        }

        @Test(arguments: Backend.all) func takenExactlyOnce(_ backend: Backend) async throws {
            try await check(backend, FlowStoreConformance.takenExactlyOnce)
        }
        @Test(arguments: Backend.all) func concurrentTakesHaveOneWinner(_ backend: Backend) async throws {
            try await check(backend, FlowStoreConformance.concurrentTakesHaveOneWinner)
        }
        @Test(arguments: Backend.all) func expiredFlowIsNotReturnedAndIsRemoved(_ backend: Backend) async throws {
            try await check(backend, FlowStoreConformance.expiredFlowIsNotReturnedAndIsRemoved)
        }
        @Test(arguments: Backend.all) func pendingFlowSurvivesRestart(_ backend: Backend) async throws {
            try await check(backend, FlowStoreConformance.pendingFlowSurvivesRestart)
        }
        @Test(arguments: Backend.all.filter { !$0.expiresFlowsItself }) func purgeRemovesOnlyExpiredFlows(_ backend: Backend) async throws {
            try await check(backend, FlowStoreConformance.purgeRemovesOnlyExpiredFlows)
        }
        @Test(arguments: Backend.all) func deviceFlowsAreListedReplacedAndKept(_ backend: Backend) async throws {
            try await check(backend, FlowStoreConformance.deviceFlowsAreListedReplacedAndKept)
        }
        @Test(arguments: Backend.all) func malformedStateIsRefused(_ backend: Backend) async throws {
            try await check(backend, FlowStoreConformance.malformedStateIsRefused)
        }
        @Test(arguments: Backend.all) func lookAlikeStateTakesNothing(_ backend: Backend) async throws {
            try await check(backend, FlowStoreConformance.lookAlikeStateTakesNothing)
        }

        /// An outcome replaces the last of its state, is read by the next open of the store, and is gone after its keepUntil.
        @Test(arguments: Backend.all) func anOutcomeIsKeptUntilItsKeepUntil(_ backend: Backend) async throws {
            try await backend.scope { open in
                let outcomes = try open().flowOutcomes
                let state = PendingFlow.randomState()
                var outcome = FlowOutcome(
                    state: state, provider: "github", status: .pending, expiresAt: Date.fixture.addingTimeInterval(600),
                    keepUntil: Date.fixture.addingTimeInterval(600))
                try await outcomes.record(outcome)
                outcome.status = .completed
                outcome.accountID = "github:42"
                outcome.endedAt = .fixture
                try await outcomes.record(outcome)
                #expect(try await open().flowOutcomes.outcome(state: state, now: .fixture) == outcome)
                #expect(try await outcomes.outcome(state: state, now: Date.fixture.addingTimeInterval(600)) == nil)
                #expect(try await outcomes.outcome(state: PendingFlow.randomState(), now: .fixture) == nil)
            }
        }
    }

    /// ``FlowStore/put(_:recording:in:)``: a flow and its pending outcome written together.
    struct PutRecording {
        /// Both the flow and its outcome are there for the next open of the store: the flow taken once, the outcome read.
        @Test(arguments: Backend.all) func theFlowAndItsOutcomeAreBothKept(_ backend: Backend) async throws {
            try await backend.scope { open in
                let storage = try open()
                let flow = PendingFlow.make(state: PendingFlow.randomState())
                let outcome = FlowOutcome.pending(flow, retention: 600)
                try await storage.flows.put(flow, recording: outcome, in: storage.flowOutcomes)
                let reopened = try open()
                #expect(try await reopened.flowOutcomes.outcome(state: flow.state, now: .fixture) == outcome)
                #expect(try await reopened.flows.take(state: flow.state, now: .fixture) == flow)
                #expect(try await reopened.flows.take(state: flow.state, now: .fixture) == nil)
                #expect(try await storage.flowOutcomes.outcome(state: flow.state, now: .fixture) == outcome)
                #expect(try await reopened.flowOutcomes.outcome(state: flow.state, now: outcome.keepUntil) == nil)
            }
        }

        /// Handed another outcome store, the outcome goes there and not into the back end's own.
        @Test(arguments: Backend.all) func anotherOutcomeStoreGetsTheOutcome(_ backend: Backend) async throws {
            try await backend.scope { open in
                let storage = try open()
                let elsewhere = InMemoryFlowStore()
                let flow = PendingFlow.make(state: PendingFlow.randomState())
                let outcome = FlowOutcome.pending(flow, retention: 600)
                try await storage.flows.put(flow, recording: outcome, in: elsewhere)
                #expect(try await elsewhere.outcome(state: flow.state, now: .fixture) == outcome)
                #expect(try await storage.flowOutcomes.outcome(state: flow.state, now: .fixture) == nil)
                #expect(try await open().flows.take(state: flow.state, now: .fixture) == flow)
            }
        }

        /// A malformed state is refused, and neither the flow nor the outcome is kept.
        @Test(arguments: Backend.all) func aMalformedStateWritesNothing(_ backend: Backend) async throws {
            try await backend.scope { open in
                let storage = try open()
                let flow = PendingFlow.make(state: "short")
                await #expect(throws: StoreError.self) {
                    try await storage.flows.put(flow, recording: .pending(flow, retention: 600), in: storage.flowOutcomes)
                }
                #expect(try await storage.flowOutcomes.outcome(state: flow.state, now: .fixture) == nil)
                #expect(try await storage.flows.take(state: flow.state, now: .fixture) == nil)
            }
        }
    }

    /// ``StorageBackend/outbox``: the outbox suite.
    struct Outbox {
        private func check(_ backend: Backend, _ suite: (OutboxOpener) async throws -> Void) async throws {
            try await backend.scope { open in
                try await suite { try #require(try open().outbox, "a back end opened with webhooks has an outbox") }
            }
        }

        @Test(arguments: Backend.all) func appendClaimComplete(_ backend: Backend) async throws {
            try await check(backend, WebhookOutboxConformance.appendClaimComplete)
        }
        @Test(arguments: Backend.all) func expiredLeaseIsTakenOver(_ backend: Backend) async throws {
            try await check(backend, WebhookOutboxConformance.expiredLeaseIsTakenOver)
        }
        @Test(arguments: Backend.all) func dropListReplay(_ backend: Backend) async throws {
            try await check(backend, WebhookOutboxConformance.dropListReplay)
        }
        @Test(arguments: Backend.all) func concurrentAppendsAndClaims(_ backend: Backend) async throws {
            try await check(backend, WebhookOutboxConformance.concurrentAppendsAndClaims)
        }
        @Test(arguments: Backend.all) func fieldsSurviveRestart(_ backend: Backend) async throws {
            try await check(backend, WebhookOutboxConformance.fieldsSurviveRestart)
        }
        @Test(arguments: Backend.all) func pagesWalkEachListOnceInOrder(_ backend: Backend) async throws {
            try await check(backend, WebhookOutboxConformance.pagesWalkEachListOnceInOrder)
        }
        @Test(arguments: Backend.all) func claimsFollowTheDueOrder(_ backend: Backend) async throws {
            try await check(backend, WebhookOutboxConformance.claimsFollowTheDueOrder)
        }
        @Test(arguments: Backend.all) func holdsLetAProbeThroughAndSetTheRestAside(_ backend: Backend) async throws {
            try await check(backend, WebhookOutboxConformance.holdsLetAProbeThroughAndSetTheRestAside)
        }

        /// An account change made with a sink on the back end's own outbox leaves its event there, once.
        @Test(arguments: Backend.all) func anAccountChangeLeavesItsEventInTheOutbox(_ backend: Backend) async throws {
            try await backend.scope { open in
                let storage = try open()
                let outbox = try #require(storage.outbox)
                let sink = OutboxEventSink(outbox: outbox, urls: ["http://127.0.0.1:9/hooks"], now: { .fixture }, wallClock: { .fixture })
                let account = Account.make(uid: "7")
                _ = try await storage.accounts.update(
                    id: account.accountID,
                    reporting: { before, after in
                        guard before == nil, let after else { return nil }
                        return (.accountConnected, BrokerEventData(account: after))
                    }, to: sink
                ) { _ in account }
                let claimed = try await outbox.claim(limit: 10, now: Date.fixture.addingTimeInterval(1), lease: 60)
                #expect(claimed.map(\.delivery.eventType) == [BrokerEventType.accountConnected.rawValue])
                #expect(claimed.map(\.delivery.accountID) == [account.accountID])
                #expect(try await storage.accounts.get(id: account.accountID) == account)
            }
        }
    }

    /// ``StorageBackend/refreshLock``.
    struct RefreshLock {
        /// One holder at a time; only its token releases the lock, after which it can be taken again.
        @Test(arguments: Backend.all) func oneHolderAtATime(_ backend: Backend) async throws {
            try await backend.scope { open in
                let lock = try open().refreshLock
                let token = try #require(try await lock.acquire(key: "github:1", ttl: 30))
                #expect(try await lock.acquire(key: "github:1", ttl: 30) == nil)
                #expect(try await lock.acquire(key: "github:2", ttl: 30) != nil)
                #expect(try await lock.release(key: "github:1", token: token + "x") == false)
                #expect(try await lock.acquire(key: "github:1", ttl: 30) == nil)
                #expect(try await lock.release(key: "github:1", token: token) == true)
                #expect(try await lock.acquire(key: "github:1", ttl: 30) != nil)
            }
        }
    }

    /// ``StorageBackend/refreshBackoff``.
    struct RefreshBackoffStore {
        /// A recorded backoff reads back for its account only, until cleared.
        @Test(arguments: Backend.all) func recordedUntilCleared(_ backend: Backend) async throws {
            try await backend.scope { open in
                let store = try open().refreshBackoff
                let backoff = RefreshBackoff(
                    failures: 2, notBefore: Date.fixture.addingTimeInterval(60), lastError: .upstreamTimeout(step: "refresh"))
                #expect(try await store.backoff(for: "github:1") == nil)
                try await store.record(backoff, for: "github:1", at: .fixture)
                #expect(try await store.backoff(for: "github:1") == backoff)
                #expect(try await store.backoff(for: "github:2") == nil)
                try await store.clear(accountID: "github:1")
                #expect(try await store.backoff(for: "github:1") == nil)
            }
        }
    }

    /// ``StorageBackend/appTokens``.
    struct AppTokens {
        /// A stored token reads back under its key, and a newer one replaces it.
        @Test(arguments: Backend.all) func storedUnderItsKey(_ backend: Backend) async throws {
            try await backend.scope { open in
                let store = try open().appTokens
                var token = AppToken(
                    provider: "github", requestedScope: "read", accessToken: Secret("app-token-1"), tokenType: "Bearer",
                    scope: "read", issuedAt: .fixture, expiresAt: Date.fixture.addingTimeInterval(3600))
                #expect(try await store.token(for: token.key) == nil)
                try await store.store(token, keepUntil: Date.fixture.addingTimeInterval(3000), at: .fixture)
                #expect(try await store.token(for: token.key) == token)
                token.accessToken = Secret("app-token-2")
                try await store.store(token, keepUntil: Date.fixture.addingTimeInterval(3000), at: .fixture)
                #expect(try await store.token(for: token.key) == token)
                #expect(try await store.token(for: AppToken.key(provider: "github", scope: "write")) == nil)
            }
        }
    }

    /// ``StorageBackend/clientRegistrations``.
    struct ClientRegistrations {
        static func registration(_ clientID: String, secret: String? = nil) -> ClientRegistration {
            ClientRegistration(
                server: "https://mcp.example.com/mcp", issuer: "https://auth.example.com",
                redirectURI: "https://broker.example.com/callback",
                clientID: clientID, clientSecret: secret.map(Secret.init),
                authentication: secret == nil ? .publicClient : .clientSecretBasic,
                registeredAt: .fixture)
        }

        /// The first registration under a key stays, a later one gets it back, and a reopened store (a restart, another
        /// replica) reads it.
        @Test(arguments: Backend.all) func theFirstStaysAndOutlivesAReopen(_ backend: Backend) async throws {
            try await backend.scope { open in
                let first = Self.registration("client-1", secret: "registered-secret-1")
                let store = try open().clientRegistrations
                #expect(try await store.registration(for: first.key) == nil)
                #expect(try await store.add(first) == first)
                #expect(try await store.add(Self.registration("client-2")) == first)
                #expect(try await store.registration(for: first.key) == first)
                #expect(try await open().clientRegistrations.registration(for: first.key) == first)
                var other = first
                other.server = "https://other.example.com/mcp"
                #expect(try await store.registration(for: other.key) == nil)
            }
        }

        /// Three stores opened on one backing store adding at once keep one registration, and each gets that one back.
        @Test(arguments: Backend.all) func racingAddsKeepOne(_ backend: Backend) async throws {
            try await backend.scope { open in
                let stores = try (0..<3).map { _ in try open().clientRegistrations }
                let kept = try await withThrowingTaskGroup(of: ClientRegistration.self) { group in
                    for (index, store) in stores.enumerated() {
                        group.addTask { try await store.add(Self.registration("client-\(index)")) }
                    }
                    var all: [ClientRegistration] = []
                    for try await one in group { all.append(one) }
                    return all
                }
                #expect(Set(kept.map(\.clientID)).count == 1)
                #expect(try await stores[0].registration(for: kept[0].key) == kept[0])
            }
        }
    }
}
