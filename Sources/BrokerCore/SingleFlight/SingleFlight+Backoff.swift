import Foundation

extension SingleFlight {
    /// Counts a failure of the work under `key` and pushes its next try back; returns the new backoff.
    ///
    /// The wait is the later of the exponential backoff and the provider's
    /// clamped `Retry-After` (``RefreshCoordinator/Policy/backoff(after:failing:at:)``).
    /// It goes to the shared store and to this process's copy; a store that
    /// cannot be written leaves the copy to enforce the backoff here.
    /// `atLeast` is the shortest wait, whatever the count (an account's cooldown).
    @discardableResult
    func recordFailure(_ failure: RefreshFailure, for key: String, atLeast: TimeInterval = 0) async -> RefreshBackoff {
        let previous = await currentBackoff(key)
        let at = now()
        let state = policy.backoff(after: previous, failing: failure, at: at, atLeast: atLeast)
        lastRecorded[ExactKey(key)] = state
        try? await backoffStore.record(state, for: key, at: at)
        return state
    }

    /// Forgets `key`'s failures after a success or a final answer, here and in the shared store.
    func clearBackoff(_ key: String) async {
        lastRecorded[ExactKey(key)] = nil
        try? await backoffStore.clear(accountID: key)
    }

    /// Forgets `key`'s failures like ``clearBackoff(_:)`` and returns what was recorded, lapsed or not; nil when nothing was.
    ///
    /// A store that cannot be reached answers with this process's own last record.
    func takeBackoff(_ key: String) async -> RefreshBackoff? {
        let own = lastRecorded.removeValue(forKey: ExactKey(key))
        do { return try await backoffStore.take(accountID: key) } catch { return own }
    }

    /// `key`'s backoff, lapsed or not, from the shared store.
    ///
    /// When the store cannot be read (Redis down or timing out), this
    /// process's own last record stands in: the work is then held back only
    /// by the failures this replica saw itself, and never blocked by the
    /// outage. While Redis is down the Redis lock cannot be taken either, so
    /// no replica calls the provider meanwhile anyway.
    func currentBackoff(_ key: String) async -> RefreshBackoff? {
        do {
            return try await backoffStore.backoff(for: key)
        } catch {
            return lastRecorded[ExactKey(key)]
        }
    }

    /// Whole seconds until `key`'s backoff ends, for a `Retry-After` answer (RFC 9110 §10.2.3); nil when it does not back off.
    func retryAfterSeconds(_ key: String) async -> Int? {
        guard let current = await activeBackoff(key) else { return nil }
        let seconds = current.notBefore.timeIntervalSince(now()).rounded(.up)
        // The store's values are range-checked, but the conversion to Int must never trap.
        guard seconds >= 1 else { return nil }
        return Int(min(seconds, 86_400 * 365))
    }

    /// The backoff that holds `key` back at this moment, or nil when a try may start.
    func activeBackoff(_ key: String) async -> RefreshBackoff? {
        guard let current = await currentBackoff(key), current.isBackingOff(at: now()) else { return nil }
        return current
    }
}
