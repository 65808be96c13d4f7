import Foundation
import Synchronization

/// Where accounts' refresh backoff lives, so that every replica sharing a store honours the same backoff.
///
/// Only the holder of an account's ``RefreshLock`` records or clears its
/// backoff, so the read-count-write of ``RefreshBackoff/failures`` needs no
/// transaction of its own. ``InProcessRefreshBackoffStore`` serves a single
/// broker on the file store; the Redis store provides one shared by replicas.
/// Every failure is a ``StoreError``.
public protocol RefreshBackoffStore: Sendable {
    /// The backoff recorded for `accountID`, lapsed or not; nil when there is none.
    func backoff(for accountID: String) async throws(StoreError) -> RefreshBackoff?
    /// Records `backoff` for `accountID`; `now` is the recorder's clock reading, from which a store may let the entry expire.
    func record(_ backoff: RefreshBackoff, for accountID: String, at now: Date) async throws(StoreError)
    /// Forgets `accountID`'s backoff after a success or a final answer.
    func clear(accountID: String) async throws(StoreError)
    /// Forgets `accountID`'s backoff and returns it, lapsed or not; nil when there was none. Tells a success
    /// that ends a run of failures (`account.recovered`) from any other.
    func take(accountID: String) async throws(StoreError) -> RefreshBackoff?
}

extension RefreshBackoffStore {
    /// By default a read, then ``clear(accountID:)``: two steps, which only the holder of the account's lock takes.
    public func take(accountID: String) async throws(StoreError) -> RefreshBackoff? {
        let backoff = try await self.backoff(for: accountID)
        try await clear(accountID: accountID)
        return backoff
    }
}

/// A ``RefreshBackoffStore`` in this process's memory: enough when a single broker owns the store.
///
/// Like the Redis store, it forgets an entry once its backoff has ended and
/// `keep` more seconds passed without another failure, so an account that
/// fails again much later starts its backoff from the base again.
public final class InProcessRefreshBackoffStore: RefreshBackoffStore {
    /// Each account's backoff and when to forget it, by exact account id.
    private let table = Mutex<[ExactKey: (backoff: RefreshBackoff, forgetAfter: Date)]>([:])
    /// Seconds an entry outlives its backoff.
    public let keep: TimeInterval
    private let now: @Sendable () -> Date

    /// Creates an empty table whose entries are forgotten `keep` seconds after their backoff ends, on `now`.
    public init(keep: TimeInterval = RefreshCoordinator.Policy.backoffKeep, now: @escaping @Sendable () -> Date = { Date() }) {
        self.keep = max(0, keep)
        self.now = now
    }

    /// The backoff of `accountID` unless it was forgotten.
    public func backoff(for accountID: String) async -> RefreshBackoff? {
        let at = now()
        return table.withLock { entries in
            guard let entry = entries[ExactKey(accountID)] else { return nil }
            guard at < entry.forgetAfter else {
                entries[ExactKey(accountID)] = nil
                return nil
            }
            return entry.backoff
        }
    }

    /// Records `backoff`, to be forgotten `keep` seconds after it ends; lapsed entries of other accounts go too.
    public func record(_ backoff: RefreshBackoff, for accountID: String, at now: Date) async {
        table.withLock { entries in
            entries = entries.filter { now < $0.value.forgetAfter }
            entries[ExactKey(accountID)] = (backoff, backoff.notBefore.addingTimeInterval(keep))
        }
    }

    /// Forgets `accountID`.
    public func clear(accountID: String) async {
        _ = table.withLock { $0.removeValue(forKey: ExactKey(accountID)) }
    }

    /// Forgets `accountID` and returns its backoff unless it was already forgotten.
    public func take(accountID: String) async -> RefreshBackoff? {
        let at = now()
        let entry = table.withLock { $0.removeValue(forKey: ExactKey(accountID)) }
        guard let entry, at < entry.forgetAfter else { return nil }
        return entry.backoff
    }
}
