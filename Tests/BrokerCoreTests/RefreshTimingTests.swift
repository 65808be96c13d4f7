import BrokerCore
import Foundation
import Testing

/// The margin never exceeds half a token's lifetime, and hostile or odd lifetimes give a margin without trapping.
struct RefreshTimingTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(arguments: [
        // (configured margin, lifetime, expected margin)
        (300.0, 300.0, 150.0),  // Keycloak's five minutes: refreshed with half its life left
        (300.0, 3600.0, 300.0),  // an hour: the configured margin
        (300.0, 600.0, 300.0),  // exactly twice the margin
        (0.0, 3600.0, 0.0),  // margin 0: refreshed at expiry
        (300.0, 0.0, 0.0),  // a 0-second token: no margin, due at once
        (300.0, 1.0, 0.5),
        (300.0, Double(TokenGrant.maximumLifetime), 300.0),  // ten years
        (1e300, 3600.0, 1800.0),  // a huge margin is capped by the lifetime
        (300.0, -60.0, 0.0),  // issued after its expiry (a clock step): no margin
    ])
    func theMarginIsTheSmallerOfTheConfiguredOneAndHalfTheLifetime(configured: Double, lifetime: Double, expected: Double) {
        let margin = RefreshTiming.margin(configured: configured, issuedAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(lifetime))
        #expect(margin == expected)
    }

    @Test func aFiveMinuteTokenFallsDueWithHalfItsLifeLeftAndItsSuccessorNotAtOnce() {
        let expiresAt = Self.t0.addingTimeInterval(300)
        func due(after seconds: Double) -> Bool {
            RefreshTiming.isDue(issuedAt: Self.t0, expiresAt: expiresAt, configured: 300, at: Self.t0.addingTimeInterval(seconds))
        }
        #expect(!due(after: 0))
        #expect(!due(after: 149))
        #expect(due(after: 150))
        #expect(due(after: 400))
        let next = Self.t0.addingTimeInterval(150)
        #expect(!RefreshTiming.isDue(issuedAt: next, expiresAt: next.addingTimeInterval(300), configured: 300, at: next))
    }

    static func account(issuedAt: Date?, expiresIn: Double?, refreshTokenLapsesIn: Double?) -> Account {
        Account(
            provider: "acme", uid: "1", accessToken: Secret("a"), refreshToken: Secret("r"),
            expiresAt: expiresIn.map { t0.addingTimeInterval($0) }, createdAt: t0.addingTimeInterval(-86_400),
            updatedAt: t0, issuedAt: issuedAt, refreshTokenExpiresAt: refreshTokenLapsesIn.map { t0.addingTimeInterval($0) })
    }

    @Test func aRecordWithoutIssuedAtCountsTheLifetimeFromItsLastRefreshOrUpdate() {
        // Written before `issued_at` existed: the token was issued at `updated_at` (t0), not at `created_at`.
        let old = Self.account(issuedAt: nil, expiresIn: 300, refreshTokenLapsesIn: nil)
        #expect(old.tokenIssuedAt == Self.t0)
        #expect(!RefreshTiming.isDue(old, configured: 300, at: Self.t0.addingTimeInterval(149)))
        #expect(RefreshTiming.isDue(old, configured: 300, at: Self.t0.addingTimeInterval(150)))
        var refreshed = old
        refreshed.refreshedAt = Self.t0.addingTimeInterval(-10)
        #expect(refreshed.tokenIssuedAt == Self.t0.addingTimeInterval(-10))
    }

    @Test func aTokenWithoutExpiryIsNeverDueUnlessItsRefreshTokenLapses() {
        let noExpiry = Self.account(issuedAt: Self.t0, expiresIn: nil, refreshTokenLapsesIn: nil)
        #expect(!RefreshTiming.isDue(noExpiry, configured: 300, at: Self.t0.addingTimeInterval(1e9)))
    }

    @Test func aRefreshTokenIsRefreshedWithinTheMarginOfItsLapseOnceAndNotAfterItLapsed() {
        let lapsing = Self.account(issuedAt: Self.t0, expiresIn: 28_800, refreshTokenLapsesIn: 3600)
        #expect(!RefreshTiming.isDue(lapsing, configured: 300, at: Self.t0.addingTimeInterval(3299)))
        #expect(RefreshTiming.isDue(lapsing, configured: 300, at: Self.t0.addingTimeInterval(3300)))
        // Lapsed: a refresh would only be refused.
        #expect(!RefreshTiming.isDue(lapsing, configured: 300, at: Self.t0.addingTimeInterval(3600)))
        // A refresh inside the window that kept the refresh token (and its expiry) does not make it due again.
        var kept = lapsing
        kept.issuedAt = Self.t0.addingTimeInterval(3350)
        kept.expiresAt = Self.t0.addingTimeInterval(3350 + 28_800)
        #expect(!RefreshTiming.isDue(kept, configured: 300, at: Self.t0.addingTimeInterval(3400)))
        // A refresh token lifetime shorter than twice the margin: half of it.
        let short = Self.account(issuedAt: Self.t0, expiresIn: nil, refreshTokenLapsesIn: 100)
        #expect(!RefreshTiming.isDue(short, configured: 300, at: Self.t0.addingTimeInterval(49)))
        #expect(RefreshTiming.isDue(short, configured: 300, at: Self.t0.addingTimeInterval(50)))
    }
}
