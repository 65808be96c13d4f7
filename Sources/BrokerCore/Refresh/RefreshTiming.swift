import Foundation

/// When a token falls due for refresh: within the margin of its expiry, the margin never more than half its lifetime.
///
/// A provider whose tokens live five minutes (Keycloak's default) would
/// otherwise have every token inside a 300-second margin from the moment it
/// is issued, and every read would refresh it. Halving the lifetime keeps one
/// refresh per token: a 300 s token is refreshed when 150 s are left. The
/// arithmetic is on `TimeInterval`s from stored dates, so nothing traps: a
/// lifetime that comes out negative (an issue date after the expiry) counts as
/// 0, a margin as large as the dates allow is simply capped by the lifetime.
public enum RefreshTiming {
    /// The margin for a token issued at `issuedAt` that expires at `expiresAt`: min(`configured`, half its lifetime), at least 0.
    public static func margin(configured: TimeInterval, issuedAt: Date, expiresAt: Date) -> TimeInterval {
        let lifetime = max(0, expiresAt.timeIntervalSince(issuedAt))
        return max(0, min(configured, lifetime / 2))
    }

    /// Whether a token issued at `issuedAt` that expires at `expiresAt` is due at `now` with margin `configured`.
    public static func isDue(issuedAt: Date, expiresAt: Date, configured: TimeInterval, at now: Date) -> Bool {
        expiresAt.timeIntervalSince(now) <= margin(configured: configured, issuedAt: issuedAt, expiresAt: expiresAt)
    }

    /// Whether `account`'s access token, or its refresh token before it lapses unused, is due at `now`.
    ///
    /// The access token is due within its margin of expiry; one without expiry
    /// never is. The refresh token (`refresh_token_expires_at`) is due within
    /// the margin of its own lapse, with the margin held to half of what it
    /// had left when the current token was issued, and only while no token
    /// has been issued within that window: a refresh that gets no new refresh
    /// token leaves the old expiry, and must not make every read refresh again.
    public static func isDue(_ account: Account, configured: TimeInterval, at now: Date) -> Bool {
        let issuedAt = account.tokenIssuedAt
        if let expiresAt = account.expiresAt, isDue(issuedAt: issuedAt, expiresAt: expiresAt, configured: configured, at: now) {
            return true
        }
        guard let lapsesAt = account.refreshTokenExpiresAt else { return false }
        let margin = margin(configured: configured, issuedAt: issuedAt, expiresAt: lapsesAt)
        let windowOpens = lapsesAt.addingTimeInterval(-margin)
        return now >= windowOpens && issuedAt < windowOpens && now < lapsesAt
    }
}
