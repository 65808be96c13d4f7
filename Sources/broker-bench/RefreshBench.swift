import BrokerApp
import BrokerCore
import BrokerFakeProviders
import BrokerFileStore
import Foundation

/// Background refreshes per second with durable writes, and the memory of a broker tracking many accounts.
///
/// The accounts live in the real file store with sealed secrets (as the
/// broker keeps them), every refresh's write fsynced. The provider is the fake
/// OAuth 2.0 provider listening on 127.0.0.1 in this process, reached through
/// the broker's own outbound client over real sockets; it issued every
/// account's refresh token, so each refresh is a real rotation.
enum RefreshBench {
    /// Seeds `tracked` accounts into `directory` (`due` of them expiring within the margin), opens the store as the broker
    /// does, sweeps once at `concurrency` per provider and prints the refreshes per second and the RSS.
    ///
    /// `broker_share_mib` is the RSS the store, the service and the sweep
    /// added on top of the process with the fake provider's grants in it; a
    /// second, idle sweep (nothing due) times listing every tracked account.
    static func run(directory: String, due: Int, tracked: Int, concurrency: Int) async throws {
        let secret = "BENCH-CLIENT-SECRET-0123456789"
        let fake = FakeOAuth2Provider(.rfc6749(clientSecret: secret))
        try fake.start()
        defer { Task { await fake.stop() } }
        let now = Date()
        let rssStart = StoreBench.rssKB()
        let tSeed = Date()
        try seed(directory, fake: fake, due: due, tracked: tracked, now: now)
        let seedSeconds = Date().timeIntervalSince(tSeed)
        // The fake provider in this process now holds every grant: the broker's share is measured from here.
        let rssSeeded = StoreBench.rssKB()
        let tOpen = Date()
        let (repository, _) = try StoreBench.repository(directory, openSealedInBackground: false)
        let failures = repository.openSealedAccounts()
        precondition(failures.isEmpty, "sealed records did not open: \(failures.count)")
        let openSeconds = Date().timeIntervalSince(tOpen)
        let rssOpen = StoreBench.rssKB()
        let registry = try ProviderRegistry.load(
            environment: ["FAKE_ACME_SECRET": secret], providersFile: Array(fake.providersFile().utf8))
        let service = AccountService(
            accounts: repository, registry: registry, upstream: EpollUpstreamClient(timeout: 10),
            redirectURI: "http://127.0.0.1:8080/callback", now: { Date() })
        let refresher = BackgroundRefresher(
            service: service, interval: 60, herd: BackgroundRefresher.Herd(concurrency: concurrency))
        let tSweep = Date()
        let summary = try await refresher.runOnce()
        let sweepSeconds = Date().timeIntervalSince(tSweep)
        let rssSweep = StoreBench.rssKB()
        let tIdle = Date()
        let idle = try await refresher.runOnce()
        let idleSweepMS = Date().timeIntervalSince(tIdle) * 1000
        print(
            String(
                format: "tracked=%d due=%d concurrency=%d refreshed=%d failed=%d skipped=%d sweep_s=%.2f refreshes_per_s=%.0f "
                    + "max_in_flight=%d stale=%d",
                tracked, due, concurrency, summary.refreshed, summary.failed, summary.skipped, sweepSeconds,
                Double(summary.refreshed) / sweepSeconds, fake.maxRefreshesInFlight, fake.ledger.stalePresentations))
        print(
            String(
                format: "seed_s=%.1f open_s=%.1f rss_start_mib=%.1f rss_seeded_mib=%.1f rss_open_mib=%.1f rss_after_sweep_mib=%.1f "
                    + "broker_share_mib=%.1f idle_sweep_ms=%.0f idle_due=%d",
                seedSeconds, openSeconds, Double(rssStart) / 1024, Double(rssSeeded) / 1024, Double(rssOpen) / 1024,
                Double(rssSweep) / 1024, Double(rssSweep - rssSeeded) / 1024, idleSweepMS, idle.due))
    }

    /// Writes the accounts' files directly (sealed, not fsynced: seeding is not what is measured), `acme:0…`.
    ///
    /// The first `due` expire in a minute, in a shuffled order of ids so the
    /// sweep's expiry order is not the id order; the others in a day.
    static func seed(_ directory: String, fake: FakeOAuth2Provider, due: Int, tracked: Int, now: Date) throws {
        try? FileManager.default.removeItem(atPath: directory)
        let (_, codec) = try StoreBench.repository(directory)
        let accounts = directory + "/accounts/"
        for i in 0..<tracked {
            let tokens = fake.grantWithoutFlow(uid: String(i))
            var account = Account(
                provider: "acme", uid: String(i), accessToken: Secret(tokens.accessToken), tokenType: "bearer",
                refreshToken: tokens.refreshToken.map(Secret.init), createdAt: now, updatedAt: now)
            account.expiresAt = now.addingTimeInterval(i < due ? 60 + Double((i &* 7919) % 240) : 86_400)
            // Hour-long tokens issued a while ago, so the whole margin applies (never more than half a lifetime).
            account.issuedAt = account.expiresAt?.addingTimeInterval(-3600)
            try DurableFile.write(try codec.encode(account), to: accounts + StoreFileName.forAccount(id: account.id), sync: false)
        }
    }
}
