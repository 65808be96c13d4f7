import Foundation

extension RefreshCoordinator {
    /// Records that `provider` answered a refresh with `Retry-After`: background refreshes of any of its accounts wait until then.
    ///
    /// A 429 or 503 with `Retry-After` (RFC 6585 §4, RFC 9110 §10.2.3) speaks
    /// for the provider, not only for the account whose refresh got it, so the
    /// background refresher stops starting refreshes there until the time
    /// asked, clamped to ``Policy/retryAfterCap``. A later answer never shortens
    /// a pause already recorded. Readers and forced refreshes are not held back
    /// by it: each account's own backoff still guards them.
    func pauseProvider(_ provider: String, after failure: RefreshFailure) {
        let at = now()
        guard let field = failure.retryAfter, let asked = RetryAfter.delay(field, at: at), asked > 0 else { return }
        let until = at.addingTimeInterval(min(policy.retryAfterCap, asked))
        let key = ExactKey(provider)
        if let current = providerPauses[key], current >= until { return }
        providerPauses[key] = until
    }

    /// Until when background refreshes of `provider` wait after it asked for it with `Retry-After`; nil when they may start now.
    public func providerPausedUntil(_ provider: String) -> Date? {
        let key = ExactKey(provider)
        guard let until = providerPauses[key] else { return nil }
        guard now() < until else {
            providerPauses[key] = nil
            return nil
        }
        return until
    }
}
