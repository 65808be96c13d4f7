import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Synchronization

/// Refresh tests' world: a real JSON-file store in a temporary directory, a fake provider, a hand-moved clock and an event log.
///
/// Two services built from one fixture share the store and, when given the
/// same lock, act as two broker replicas.
struct RefreshFixture {
    /// Credentials for the presets plus a custom `acme` provider that authenticates with HTTP Basic.
    static let providersFile = """
        {"providers": {"acme": {"kind": "oauth2", "client_id": "acme-id", "client_secret": "acme-secret-SENTINEL",
          "authorize_url": "https://acme.example/authorize", "token_url": "https://acme.example/token",
          "user_url": "https://acme.example/user", "token_endpoint_auth_method": "client_secret_basic"}}}
        """
    static let googleTokenURL = "https://oauth2.googleapis.com/token"
    static let githubTokenURL = "https://github.com/login/oauth/access_token"

    let accounts: JSONFileAccountRepository
    let upstream: FakeUpstream
    let clock: TestClock
    let registry: ProviderRegistry
    let events: EventLog

    /// Runs `body` with fresh stores and no provider answers installed.
    static func with(_ body: (RefreshFixture) async throws -> Void) async throws {
        try await TemporaryDirectory.with { directory in
            let registry = try ProviderRegistry.load(environment: BrokerHarness.environment, providersFile: Array(providersFile.utf8))
            await GoogleOpenID.discover(in: registry)
            let fixture = RefreshFixture(
                accounts: try JSONFileAccountRepository(directory: directory), upstream: FakeUpstream(),
                clock: TestClock(), registry: registry, events: EventLog())
            try await body(fixture)
        }
    }

    /// An account service (one "replica") over the shared store; `upstream` defaults to the fixture's fake.
    func service(margin: TimeInterval = 300, lock: (any RefreshLock)? = nil, upstream: (any UpstreamClient)? = nil) -> AccountService {
        let events = self.events
        return AccountService(
            accounts: accounts, registry: registry, upstream: upstream ?? self.upstream,
            redirectURI: "https://broker.example/callback", now: clock.function,
            refreshPolicy: RefreshCoordinator.Policy(margin: margin, lockTTL: 30, pollInterval: 0.01),
            refreshLock: lock, onRefresh: { events.append($0) })
    }

    /// Stores an account at the fixture time whose token expires `lifetime` seconds later.
    ///
    /// The token was issued an hour before, so that a short `lifetime` means "little time left", and the margin is
    /// the configured one rather than half of a short lifetime (see ``RefreshTiming``).
    @discardableResult
    func seed(
        provider: String = "google", uid: String = "110169484474386276334", lifetime: TimeInterval = 3600,
        refreshToken: String? = "1//refresh-SENTINEL-0", status: AccountStatus = .active
    ) async throws -> Account {
        var account = Account.make(provider: provider, uid: uid, accessToken: "\(provider)-access-SENTINEL-0")
        account.refreshToken = refreshToken.map(Secret.init)
        account.expiresAt = Date.fixture.addingTimeInterval(lifetime)
        account.issuedAt = Date.fixture.addingTimeInterval(-3600)
        account.status = status
        try await accounts.put(account)
        return account
    }

    /// The stored account `id`.
    func stored(_ id: AccountID) async throws -> Account? {
        try await accounts.get(id: id)
    }

    /// The refresh requests `url` received.
    func refreshCalls(to url: String = googleTokenURL) async -> [UpstreamRequest] {
        await upstream.requests(to: url).filter { $0.form["grant_type"] == "refresh_token" }
    }
}

/// The refresh events a service reported, in order.
final class EventLog: Sendable {
    private let events = Mutex<[RefreshCoordinator.Event]>([])
    func append(_ event: RefreshCoordinator.Event) { events.withLock { $0.append(event) } }
    var all: [RefreshCoordinator.Event] { events.withLock { $0 } }
}

/// A token endpoint that rotates refresh tokens as GitHub Apps do: each one works once, and its successor is issued with the new access token.
final class RotatingTokenEndpoint: Sendable {
    private struct State {
        var current: String
        var issued = 0
        var presented: [String] = []
    }

    private let state: Mutex<State>

    /// Starts with `refreshToken` as the one valid refresh token.
    init(refreshToken: String) {
        state = Mutex(State(current: refreshToken))
    }

    /// Every refresh token presented, in order.
    var presented: [String] { state.withLock { $0.presented } }
    /// The refresh token the provider would accept now.
    var current: String { state.withLock { $0.current } }

    /// Answers a refresh: a new access and refresh token for the current one, `bad_refresh_token` (HTTP 200, GitHub's way) for any other.
    func answer(_ request: UpstreamRequest) -> Result<UpstreamResponse, UpstreamError> {
        let presented = request.form["refresh_token"] ?? ""
        let issued = state.withLock { s -> Int? in
            s.presented.append(presented)
            guard presented == s.current else { return nil }
            s.issued += 1
            s.current = "ghr_refresh-SENTINEL-\(s.issued)"
            return s.issued
        }
        guard let issued else {
            return .success(
                ProviderWire.response(
                    200, "application/json; charset=utf-8",
                    #"{"error":"bad_refresh_token","error_description":"The refresh token passed is incorrect or expired."}"#))
        }
        return .success(
            ProviderWire.response(
                200, "application/json; charset=utf-8",
                #"""
                {"access_token":"ghu_access-SENTINEL-\#(issued)","expires_in":28800,"refresh_token":"ghr_refresh-SENTINEL-\#(issued)","refresh_token_expires_in":15811200,"scope":"","token_type":"bearer"}
                """#))
    }
}

/// An upstream that holds every request until opened, so a test can pile readers onto one refresh in flight.
actor HeldUpstream: UpstreamClient {
    private let inner: FakeUpstream
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// Requests that have arrived, held or not.
    private(set) var arrivals = 0
    /// Signalled as each request arrives.
    private let arrived = TestEvent()

    init(forwardingTo inner: FakeUpstream) {
        self.inner = inner
    }

    func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        arrivals += 1
        arrived.signal()
        if !isOpen { await withCheckedContinuation { waiting.append($0) } }
        return try await inner.send(request)
    }

    /// Lets every held and later request through.
    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting = []
    }

    /// Waits (up to 10 s) until `count` requests have arrived.
    func waitForArrivals(_ count: Int) async throws {
        guard await arrived.wait(count: count) else { throw StoreTestError("\(count) requests did not arrive within 10 s") }
    }
}

extension ProviderWire {
    /// Google's token answer without a refresh token: every refresh answer, and code exchanges after the first consent (providers.md §4.2).
    static func googleToken(accessToken: String, expiresIn: Int = 3920) -> UpstreamResponse {
        response(
            200, "application/json; charset=utf-8",
            #"{"access_token":"\#(accessToken)","expires_in":\#(expiresIn),"scope":"openid https://www.googleapis.com/auth/userinfo.email","token_type":"Bearer"}"#
        )
    }

    /// Google's answer to a revoked or expired refresh token: HTTP 400 `invalid_grant` (RFC 6749 §5.2).
    static let googleInvalidGrant = response(
        400, "application/json; charset=utf-8",
        #"{"error":"invalid_grant","error_description":"Token has been expired or revoked."}"#)
}

/// A ``RefreshLock`` that counts how often it is asked, over an in-process lock.
final class CountingLock: RefreshLock {
    private let inner: InProcessRefreshLock
    private let count = Mutex(0)

    init(now: @escaping @Sendable () -> Date) {
        inner = InProcessRefreshLock(now: now)
    }

    /// How many acquisitions were tried.
    var acquisitions: Int { count.withLock { $0 } }
    /// Signalled as each acquisition is tried.
    let attempts = TestEvent()

    func acquire(key: String, ttl: Double) async -> String? {
        count.withLock { $0 += 1 }
        attempts.signal()
        return await inner.acquire(key: key, ttl: ttl)
    }

    func release(key: String, token: String) async -> Bool {
        await inner.release(key: key, token: token)
    }
}
