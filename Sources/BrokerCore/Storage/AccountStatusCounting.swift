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
    /// Accounts whose refresh failed for the whole give-up period; tried again only when forced or signed in anew.
    public var refreshExhausted = 0
    /// Accounts whose entered credential the provider refused at the last verification.
    public var invalid = 0

    /// Counts of zero.
    public init(active: Int = 0, expired: Int = 0, reauthorizationRequired: Int = 0, refreshExhausted: Int = 0, invalid: Int = 0) {
        self.active = active
        self.expired = expired
        self.reauthorizationRequired = reauthorizationRequired
        self.refreshExhausted = refreshExhausted
        self.invalid = invalid
    }

    /// The moment `account` starts to count as expired: its expiry when it is active, has one and holds no
    /// refresh token; nil when it never does. The one statement of the rule, for every way of counting.
    public static func expiryThatCounts(_ account: Account) -> Date? {
        guard account.status == .active, account.refreshToken == nil else { return nil }
        return account.expiresAt
    }

    /// Adds `account` as it stands at `now`.
    public mutating func add(_ account: Account, at now: Date) {
        if account.status == .reauthorizationRequired {
            reauthorizationRequired += 1
        } else if account.status == .refreshExhausted {
            refreshExhausted += 1
        } else if account.status == .invalid {
            invalid += 1
        } else if let expiry = Self.expiryThatCounts(account), expiry <= now {
            expired += 1
        } else {
            active += 1
        }
    }
}

/// A repository that counts its accounts by status cheaply: without opening a sealed secret and without reading every record.
///
/// `/metrics` asks on every scrape, so an implementation answers from counts it
/// keeps up to date as it writes (the file store in memory, Redis beside the
/// records), never by listing and decoding the accounts.
public protocol AccountStatusCounting: Sendable {
    /// Every stored account counted by status at `now`.
    func statusCounts(at now: Date) async throws(StoreError) -> AccountStatusCounts
}
