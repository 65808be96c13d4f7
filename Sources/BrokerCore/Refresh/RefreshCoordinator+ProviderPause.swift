import Foundation

extension RefreshCoordinator {
    /// The key under which a provider's pause lives in the ``RefreshBackoffStore``, beside the accounts' backoffs.
    ///
    /// Account ids always hold a `:` and provider names never do, so this
    /// key is never an account's.
    static func pauseKey(for provider: String) -> String {
        "provider/" + provider
    }

    /// Records that `provider` answered a refresh with `Retry-After`: background refreshes of any of its accounts wait until then.
    ///
    /// A 429 or 503 with `Retry-After` (RFC 6585 §4, RFC 9110 §10.2.3) speaks
    /// for the provider, not only for the account whose refresh got it, so the
    /// background refresher stops starting refreshes there until the time
    /// asked, clamped to ``Policy/retryAfterCap``. The pause goes to the
    /// backoff store shared with the other replicas, so their sweeps hold off
    /// too, and to this process's copy, which stands in when the store cannot
    /// be reached. A later answer never shortens a pause already recorded here.
    /// Readers and forced refreshes are not held back by it: each account's
    /// own backoff still guards them.
    func pauseProvider(_ provider: String, after failure: RefreshFailure) async {
        let at = now()
        guard let delay = policy.retryAfter(of: failure, at: at), delay > 0 else { return }
        let until = at.addingTimeInterval(delay)
        let key = ExactKey(provider)
        if let current = providerPauses[key], current >= until { return }
        providerPauses[key] = until
        let pause = RefreshBackoff(failures: 1, notBefore: until, lastError: failure.error)
        try? await flight.backoffStore.record(pause, for: Self.pauseKey(for: provider), at: at)
    }

    /// Until when background refreshes of `provider` wait after it, or another replica, was asked for it with `Retry-After`;
    /// nil when they may start now.
    public func providerPausedUntil(_ provider: String) async -> Date? {
        let key = ExactKey(provider)
        let at = now()
        if let until = providerPauses[key], at < until { return until }
        providerPauses[key] = nil
        guard let shared = try? await flight.backoffStore.backoff(for: Self.pauseKey(for: provider)), shared.isBackingOff(at: at) else {
            return nil
        }
        providerPauses[key] = shared.notBefore
        return shared.notBefore
    }
}
