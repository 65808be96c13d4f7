import Foundation

/// The number of stored accounts in each status `/metrics` reports.
///
/// `expired` is an active account past its expiry that holds no refresh token:
/// one with a refresh token is renewed on its next read (or by the background
/// sweep), so it counts as active, as `/account` reports it.
public struct AccountStatusCounts: Sendable, Equatable {
    /// Usable accounts, or ones a refresh will make usable.
    public var active = 0
    /// Active accounts past their expiry with nothing to refresh them with.
    public var expired = 0
    /// Accounts whose refresh token was refused; the user must authorize again.
    public var reauthorizationRequired = 0

    /// Counts of zero.
    public init(active: Int = 0, expired: Int = 0, reauthorizationRequired: Int = 0) {
        self.active = active
        self.expired = expired
        self.reauthorizationRequired = reauthorizationRequired
    }

    /// Adds one account with these facts; the one statement of which status it counts under.
    public mutating func add(status: AccountStatus, expiresAt: Date?, hasRefreshToken: Bool, at now: Date) {
        switch status {
        case .reauthorizationRequired:
            reauthorizationRequired += 1
        case .active:
            if let expiresAt, expiresAt <= now, !hasRefreshToken { expired += 1 } else { active += 1 }
        }
    }

    /// Adds `account`.
    public mutating func add(_ account: Account, at now: Date) {
        add(status: account.status, expiresAt: account.expiresAt, hasRefreshToken: account.refreshToken != nil, at: now)
    }
}

/// A repository that counts its accounts by status cheaply: without opening a sealed secret and without reading every record.
///
/// `/metrics` asks on every scrape, so an implementation answers from memory
/// (the file store's index) or from counts it keeps up to date as it writes
/// (Redis), never by listing and decoding the accounts.
public protocol AccountStatusCounting: Sendable {
    /// Every stored account counted by status at `now`.
    func statusCounts(at now: Date) async throws -> AccountStatusCounts
}
