import BrokerCore
import BrokerFakeProviders
import BrokerPostgres
import BrokerTestSupport
import Foundation
import Testing

/// A refresh whose answer arrives while the database is down: the provider has spent the refresh token presented, so its
/// successor must reach the store once the database is back, not be dropped (the next refresh would present a spent one).
@Suite(.scoped) struct RefreshStoreOutageTests {
    static let clientSecret = "outage-secret-SENTINEL"

    @Test func aRotatedRefreshTokenAnsweredDuringADatabaseOutageIsStoredOnceItIsBack() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client()
        try await PostgresSchema.migrate(client)
        let backend = PostgresStorageBackend(client: client)
        let fake = FakeOAuth2Provider(.rfc6749(clientSecret: Self.clientSecret))
        fake.set { $0.refreshTokens = .rotate }
        let registry = try ProviderRegistry.load(
            environment: ["FAKE_ACME_SECRET": Self.clientSecret], providersFile: Array(fake.providersFile().utf8))
        let tokens = fake.grantWithoutFlow(uid: "7")
        var account = Account.make(provider: "acme", uid: "7", accessToken: tokens.accessToken)
        account.refreshToken = tokens.refreshToken.map(Secret.init)
        account.expiresAt = Date().addingTimeInterval(3600)
        try await backend.accounts.put(account)
        // Half the lock's lifetime is how long a refreshed account's write is tried again: long enough for a restart
        // of the database on a loaded machine.
        let service = AccountService(
            accounts: backend.accounts, registry: registry, upstream: RouterUpstream(router: fake.router),
            redirectURI: "https://broker.example/callback", now: { Date() }, refreshPolicy: RefreshCoordinator.Policy(lockTTL: 240))

        // The provider holds its answer until the database is down.
        fake.set { $0.refreshHeld = true }
        let refresh = Task { () async throws(BrokerError) -> Account in try await service.refreshNow(id: account.accountID) }
        #expect(await eventually { fake.ledger.refreshesInFlight == 1 })
        await server.kill()
        fake.set { $0.refreshHeld = false }
        // The answer is out (the presented refresh token spent), and its write has found the database gone.
        #expect(await eventually { fake.ledger.refreshesInFlight == 0 && service.refresher.storeRetries > 0 })
        try await server.restart()

        let refreshed = try await refresh.value
        #expect(refreshed.accessToken.value != tokens.accessToken)
        #expect(refreshed.refreshToken != nil && refreshed.refreshToken?.value != tokens.refreshToken)
        #expect(try await backend.accounts.get(id: account.accountID) == refreshed)
        // The stored successor works: the next refresh (a minute later, past the reuse of a fresh refresh's answer)
        // presents it, and no refresh token was ever presented twice.
        let later = AccountService(
            accounts: backend.accounts, registry: registry, upstream: RouterUpstream(router: fake.router),
            redirectURI: "https://broker.example/callback", now: { Date().addingTimeInterval(60) })
        let again = try await later.refreshNow(id: account.accountID)
        #expect(again.refreshToken != refreshed.refreshToken)
        #expect(fake.refreshCalls == 2)
        #expect(fake.ledger.stalePresentations == 0)
        await client.close()
    }
}
