import BrokerCore
import Foundation

/// The file store's accounts counted by status, kept up to date as accounts come and go, so a count is a binary search.
///
/// A pass over 100,000 accounts under the index lock would hold up every read
/// on each `/metrics` scrape; this keeps the number needing reauthorization and
/// the expiries that count (``AccountStatusCounts/expiryThatCounts(_:)``) in
/// ascending order, so the accounts expired at any moment are those up to it.
/// While the store loads, expiries are appended unsorted and the first count
/// sorts them once; after that a write inserts or removes one in place.
struct AccountStatusTally: Sendable {
    /// Accounts whose status is `reauthorization_required`.
    private var reauthorizationRequired = 0
    /// Accounts whose status is `refresh_exhausted`.
    private var refreshExhausted = 0
    /// Accounts whose status is `invalid`.
    private var invalid = 0
    /// Expiries in seconds since 1970 of the accounts that will count as expired; ascending once ``sorted``.
    private var expiries: [Double] = []
    /// Whether ``expiries`` is in order (false until the first count, so a load of many records appends).
    private var sorted = false

    /// The moment `account` starts to count as expired, as ``AccountStatusCounts/expiryThatCounts(_:)`` states the rule
    /// (its expiry when it is active and holds no refresh token), read from the index's compact form.
    private static func expiryThatCounts(_ account: borrowing CompactAccount) -> Double? {
        guard account.status == .active, !account.hasRefreshToken else { return nil }
        return account.expiry?.timeIntervalSince1970
    }

    /// Counts `account`.
    mutating func add(_ account: borrowing CompactAccount) {
        if account.status == .reauthorizationRequired { reauthorizationRequired += 1 }
        if account.status == .refreshExhausted { refreshExhausted += 1 }
        if account.status == .invalid { invalid += 1 }
        guard let expiry = Self.expiryThatCounts(account) else { return }
        if sorted {
            expiries.insert(expiry, at: firstIndex(notBelow: expiry))
        } else {
            expiries.append(expiry)
        }
    }

    /// Stops counting `account`, as it was counted by ``add(_:)``.
    mutating func remove(_ account: borrowing CompactAccount) {
        if account.status == .reauthorizationRequired { reauthorizationRequired -= 1 }
        if account.status == .refreshExhausted { refreshExhausted -= 1 }
        if account.status == .invalid { invalid -= 1 }
        guard let expiry = Self.expiryThatCounts(account) else { return }
        if sorted {
            let index = firstIndex(notBelow: expiry)
            if index < expiries.count && expiries[index] == expiry { expiries.remove(at: index) }
        } else if let index = expiries.firstIndex(of: expiry) {
            expiries.swapAt(index, expiries.count - 1)
            expiries.removeLast()
        }
    }

    /// The counts at `now` of `total` accounts; sorts the expiries the first time.
    mutating func counts(total: Int, at now: Date) -> AccountStatusCounts {
        if !sorted {
            expiries.sort()
            sorted = true
        }
        let expired = firstIndex(above: now.timeIntervalSince1970)
        return AccountStatusCounts(
            active: total - reauthorizationRequired - refreshExhausted - invalid - expired, expired: expired,
            reauthorizationRequired: reauthorizationRequired, refreshExhausted: refreshExhausted, invalid: invalid)
    }

    /// The index of the first expiry at or above `value` (binary search; ``expiries`` must be sorted).
    private func firstIndex(notBelow value: Double) -> Int {
        var low = 0, high = expiries.count
        while low < high {
            let middle = (low + high) / 2
            if expiries[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of the first expiry above `value`: how many are at or below it.
    private func firstIndex(above value: Double) -> Int {
        var low = 0, high = expiries.count
        while low < high {
            let middle = (low + high) / 2
            if expiries[middle] <= value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
