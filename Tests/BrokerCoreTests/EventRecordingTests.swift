import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

/// The services record each event where its fact happens, once per change, with no secret in it.
struct EventRecordingTests {
    /// An ``EventSink`` that keeps what it is given, or fails every record when told to.
    final class RecordingSink: EventSink {
        private let recorded = Mutex<[(BrokerEventType, BrokerEventData)]>([])
        private let failing = Mutex(false)

        func record(_ type: BrokerEventType, _ data: BrokerEventData) async throws(StoreError) {
            if failing.withLock({ $0 }) { throw .unavailable("outbox full") }
            recorded.withLock { $0.append((type, data)) }
        }

        func fail(_ on: Bool) { failing.withLock { $0 = on } }
        var types: [BrokerEventType] { recorded.withLock { $0.map(\.0) } }
        var data: [BrokerEventData] { recorded.withLock { $0.map(\.1) } }
    }

    /// Services with a recording sink over real file stores, a fake provider and a hand-moved clock.
    struct World {
        let sink = RecordingSink()
        let upstream = FakeUpstream()
        let clock = TestClock()
        let accounts: JSONFileAccountRepository
        let authorization: AuthorizationService
        let service: AccountService
        let registry: ProviderRegistry

        static func with(_ body: (World) async throws -> Void) async throws {
            try await TemporaryDirectory.with { directory in
                let world = try World(directory: directory)
                await GoogleOpenID.discover(in: world.registry)
                await world.upstream.on(
                    "https://api.weibo.com/oauth2/access_token",
                    respond: ProviderWire.weiboToken(accessToken: BrokerHarness.weiboAccessToken))
                await world.upstream.on(
                    "https://api.weibo.com/2/account/get_uid.json", respond: ProviderWire.weiboUID("3733034601", asNumber: false))
                await world.upstream.on("https://api.weibo.com/oauth2/revokeoauth2", respond: ProviderWire.weiboRevoked)
                try await body(world)
            }
        }

        private init(directory: String) throws {
            accounts = try JSONFileAccountRepository(directory: directory)
            let registry = try ProviderRegistry.load(environment: BrokerHarness.environment, providersFile: nil)
            self.registry = registry
            authorization = AuthorizationService(
                registry: registry, accounts: accounts, flows: InMemoryFlowStore(), upstream: upstream,
                publicURL: BrokerHarness.publicURL, flowTTL: 600, returnToAllowlist: [], now: clock.function, events: sink)
            service = AccountService(
                accounts: accounts, registry: registry, upstream: upstream,
                redirectURI: authorization.redirectURI, now: clock.function,
                refreshPolicy: RefreshCoordinator.Policy(lockTTL: 30, pollInterval: 0.01), events: sink)
        }

        /// A whole Weibo sign-in; the account it stored.
        func connect(query extra: [String: String] = [:]) async throws(BrokerError) -> Account {
            let start = try await authorization.begin(provider: "weibo", returnTo: nil, binding: AuthorizationService.apiBinding)
            var query = ["code": "code-SENTINEL", "state": start.state]
            query.merge(extra) { $1 }
            return try await authorization.complete(state: start.state, bindingProof: nil, query: query).account
        }

        /// Stores a Google account with a refresh token whose access token lives `lifetime` seconds.
        func seedGoogle(lifetime: TimeInterval) async throws -> Account {
            var account = Account.make(provider: "google", uid: "110169484474386276334", accessToken: "ya29.access-SENTINEL")
            account.refreshToken = Secret("1//refresh-SENTINEL")
            account.expiresAt = clock.now.addingTimeInterval(lifetime)
            try await accounts.put(account)
            return account
        }
    }

    @Test func aFirstSignInIsConnectedAndTheNextReconnected() async throws {
        try await World.with { w in
            let account = try await w.connect()
            _ = try await w.connect()
            // These flows are a back end's (the API binding), so each also reports flow.completed with its state.
            #expect(w.sink.types == [.accountConnected, .flowCompleted, .accountReconnected, .flowCompleted])
            let data = try #require(w.sink.data.first)
            #expect(data.accountID == "weibo:3733034601" && data.provider == "weibo" && data.uid == "3733034601")
            #expect(data.status == "active" && data.expiresAt == account.expiresAt)
        }
    }

    @Test func eventsCarryTheEndUserAndTagsOfTheAccountAndOfAFailedFlow() async throws {
        try await World.with { w in
            let owner = EndUser(id: "user-42", email: "ada@example.com", name: "Ada")
            let start = try await w.authorization.begin(
                provider: "weibo", returnTo: nil, binding: AuthorizationService.apiBinding, endUser: owner, tags: ["plan": "pro"])
            let account = try await w.authorization.complete(
                state: start.state, bindingProof: nil, query: ["code": "code-SENTINEL", "state": start.state]
            ).account
            #expect(account.endUser == owner && account.tags == ["plan": "pro"])
            let data = try #require(w.sink.data.first)
            #expect(data.endUserID == "user-42" && data.tags == ["plan": "pro"])
            let json = String(
                decoding: BrokerEvent(id: "evt_3", type: .accountConnected, createdAt: .fixture, data: data).body(), as: UTF8.self)
            #expect(json.contains(#""end_user_id":"user-42""#) && json.contains(#""tags":{"plan":"pro"}"#))
            #expect(!json.contains("ada@example.com"))
            // A browser's sign-in of the same account keeps them; so does its event.
            _ = try await w.connect()
            #expect(w.sink.data.last?.endUserID == "user-42" && w.sink.data.last?.tags == ["plan": "pro"])
            // A flow for an end user that fails names the end user.
            let failing = try await w.authorization.begin(
                provider: "weibo", returnTo: nil, binding: AuthorizationService.apiBinding, endUser: EndUser(id: "user-7"))
            _ = await brokerError {
                try await w.authorization.complete(
                    state: failing.state, bindingProof: nil, query: ["error": "access_denied", "state": failing.state])
            }
            #expect(w.sink.types.last == .flowFailed && w.sink.data.last?.endUserID == "user-7")
        }
    }

    @Test func aSignInThatFailsAfterItsFlowWasFoundIsFlowFailed() async throws {
        try await World.with { w in
            let refusal = await brokerError { try await w.connect(query: ["error": "access_denied", "code": ""]) }
            #expect(refusal == .accessDenied)
            #expect(w.sink.types == [.flowFailed])
            let data = try #require(w.sink.data.first)
            #expect(data.provider == "weibo" && data.error == "access_denied" && data.accountID == nil)
            // A state that finds no flow reports nothing: anyone can send one.
            _ = await brokerError { try await w.authorization.complete(state: "no-such-state-0123456789", bindingProof: nil, query: [:]) }
            #expect(w.sink.types == [.flowFailed])
        }
    }

    @Test func anEventThatCannotBeRecordedFailsTheCallback() async throws {
        try await World.with { w in
            w.sink.fail(true)
            let refusal = await brokerError { try await w.connect() }
            #expect(refusal?.code == "storage_unavailable")
            // The account is stored; reconnecting with the sink working reports it.
            w.sink.fail(false)
            _ = try await w.connect()
            #expect(w.sink.types == [.accountReconnected, .flowCompleted])
        }
    }

    @Test func aDeletionIsReportedOnceWithWhetherItWasRevoked() async throws {
        try await World.with { w in
            let account = try await w.connect()
            let result = try await w.service.delete(id: account.accountID)
            #expect(result.revoked == true)
            #expect(await brokerError { try await w.service.delete(id: account.accountID) } == .notFound)
            #expect(w.sink.types == [.accountConnected, .flowCompleted, .accountDeleted])
            let data = try #require(w.sink.data.last)
            #expect(data.revoked == true && data.status == "deleted" && data.accountID == account.accountID)
            // A provider without revocation reports revoked false.
            let google = try await w.seedGoogle(lifetime: 3600)
            await w.upstream.on("https://oauth2.googleapis.com/revoke", respond: UpstreamResponse(status: 503))
            _ = try await w.service.delete(id: google.accountID)
            #expect(w.sink.data.last?.revoked == false)
        }
    }

    @Test func aRejectedRefreshTokenIsReportedOnce() async throws {
        try await World.with { w in
            await w.upstream.on("https://oauth2.googleapis.com/token", respond: ProviderWire.googleInvalidGrant)
            let account = try await w.seedGoogle(lifetime: 600)
            w.clock.advance(500)
            for _ in 0..<3 { _ = await brokerError { try await w.service.account(id: account.accountID) } }
            #expect(w.sink.types == [.accountReauthorizationRequired])
            #expect(w.sink.data.first?.status == "reauthorization_required")
        }
    }

    @Test func aTransientFailureIsReportedWhenTheTokenWillNotLastUntilTheNextTry() async throws {
        try await World.with { w in
            await w.upstream.on("https://oauth2.googleapis.com/token", respond: ProviderWire.htmlError)
            let account = try await w.seedGoogle(lifetime: 3600)
            // 200 s left, the first retry after 10 s: the token outlives it, nothing to report yet.
            w.clock.advance(3400)
            _ = try await w.service.account(id: account.accountID)
            #expect(w.sink.types.isEmpty)
            // Retries double (10, 20, 40, 80, 160 s): the failure whose next try falls after expiry reports it.
            var reported: [Date] = []
            for _ in 0..<8 {
                guard let wait = await w.service.retryAfter(accountID: account.accountID) else { break }
                w.clock.advance(TimeInterval(wait))
                _ = await brokerError { try await w.service.account(id: account.accountID) }
                if w.sink.types.count > reported.count { reported.append(w.clock.now) }
            }
            #expect(w.sink.types == [.accountRefreshFailed])
            let data = try #require(w.sink.data.first)
            #expect(data.error == "upstream_error" && data.nextRetryAt.map { $0 >= account.expiresAt! } == true)
            #expect(reported.first.map { $0 < account.expiresAt! } == true)
        }
    }

    @Test func theEventJSONHoldsTheFactsAndNoSecret() async throws {
        var account = Account.make(provider: "google", uid: "42", accessToken: "ya29.access-SENTINEL")
        account.refreshToken = Secret("1//refresh-SENTINEL")
        account.tokenSecret = Secret("secret-SENTINEL")
        account.expiresAt = Date(timeIntervalSince1970: 1_800_000_000)
        var data = BrokerEventData(account: account, status: "deleted")
        data.revoked = false
        let event = BrokerEvent(
            id: "evt_" + String(repeating: "0", count: 32), type: .accountDeleted,
            createdAt: Date(timeIntervalSince1970: 1_700_000_000.5), data: data)
        let json = String(decoding: event.body(), as: UTF8.self)
        #expect(
            json == """
                {"created_at":"2023-11-14T22:13:20.500Z","data":{"account_id":"google:42","expires_at":"2027-01-15T08:00:00Z",\
                "provider":"google","revoked":false,"status":"deleted","uid":"42"},"id":"evt_00000000000000000000000000000000",\
                "type":"account.deleted"}
                """)
        #expect(!json.contains("SENTINEL"))
        var flow = BrokerEventData(provider: "weibo")
        flow.error = "access_denied"
        let failed = String(decoding: BrokerEvent(id: "evt_1", type: .flowFailed, createdAt: .fixture, data: flow).body(), as: UTF8.self)
        #expect(failed.contains("\"data\":{\"error\":\"access_denied\",\"provider\":\"weibo\"}"))
        let noExpiry = BrokerEventData(account: Account.make(uid: "7"))
        let connected = String(
            decoding: BrokerEvent(id: "evt_2", type: .accountConnected, createdAt: .fixture, data: noExpiry).body(), as: UTF8.self)
        #expect(connected.contains("\"expires_at\":null"))
    }
}
