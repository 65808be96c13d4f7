import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

/// A herd: ten thousand accounts falling due at once, swept by the background refresher against the fake provider.
///
/// The provider is called in process (``RouterUpstream``): it answers in its
/// real wire format and counts how many refresh grants it is answering at
/// once, and no socket per call slows ten thousand calls down. The accounts
/// live in memory: in the file store every write fsyncs its own file, and
/// twenty thousand fsyncs (seed and sweep) would have the test wait on the
/// disk for most of its run; `broker-bench refresh-herd` measures the sweep
/// with durable writes instead.
struct RefreshHerdTests {
    static let clientSecret = "herd-secret-SENTINEL"

    @Test func tenThousandAccountsDueAtOnceDrainAtTheCapWithoutErrors() async throws {
        do {
            let fake = FakeOAuth2Provider(.rfc6749(clientSecret: Self.clientSecret))
            // Each answer takes a moment, so refreshes overlap at the provider as they do over a network.
            fake.set { $0.refreshDelay = 0.001 }
            let registry = try ProviderRegistry.load(
                environment: ["FAKE_ACME_SECRET": Self.clientSecret], providersFile: Array(fake.providersFile().utf8))
            let accounts = InMemoryAccountRepository()
            let clock = TestClock()
            let count = 10_000
            try await Self.seed(count, at: fake, into: accounts, expiringAt: clock.now.addingTimeInterval(60))
            let service = AccountService(
                accounts: accounts, registry: registry, upstream: RouterUpstream(router: fake.router),
                redirectURI: "https://broker.example/callback", now: clock.function,
                refreshPolicy: RefreshCoordinator.Policy(margin: 300))
            let cap = 8
            let refresher = BackgroundRefresher(
                service: service, interval: 60, herd: BackgroundRefresher.Herd(concurrency: cap, startJitter: 0.0005))

            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: count, refreshed: count))
            #expect(fake.refreshCalls == count)
            #expect(fake.ledger.stalePresentations == 0)
            #expect(fake.maxRefreshesInFlight <= cap)
            #expect(fake.maxRefreshesInFlight > 1)
            // Drained: every account holds a token from a refresh, and nothing is due any more.
            let stored = try await accounts.list(provider: "acme")
            #expect(stored.count == count)
            #expect(stored.allSatisfy { $0.refreshedAt == clock.now && $0.expiresAt! > clock.now.addingTimeInterval(300) })
            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary())
        }
    }

    /// Stores `count` accounts `acme:0…` holding grants the fake issued, all expiring at `expiry`; 256 writes in flight.
    static func seed(_ count: Int, at fake: FakeOAuth2Provider, into accounts: some AccountRepository, expiringAt expiry: Date)
        async throws
    {
        var next = 0
        while next < count {
            let batch = min(256, count - next)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in next..<(next + batch) {
                    let tokens = fake.grantWithoutFlow(uid: String(i))
                    var account = Account.make(provider: "acme", uid: String(i), accessToken: tokens.accessToken)
                    account.refreshToken = tokens.refreshToken.map(Secret.init)
                    account.expiresAt = expiry
                    // Issued an hour before it expires, so the margin (at most half the lifetime) is the whole 300 s.
                    account.issuedAt = expiry.addingTimeInterval(-3600)
                    group.addTask { try await accounts.put(account) }
                }
                try await group.waitForAll()
            }
            next += batch
        }
    }
}
