import Synchronization

/// Counts refresh calls to providers and their failures by provider, for `/metrics`.
public final class RefreshMetrics: Sendable {
    /// One provider's counters.
    public struct Counts: Sendable, Equatable {
        /// The provider.
        public var provider: String
        /// Refresh calls made (each ends as a success or one of the failures).
        public var attempts = 0
        /// Failures because the refresh token was dead.
        public var invalidGrant = 0
        /// Failures that left the token in place for a later retry.
        public var transient = 0

        /// Creates zeroed counters for `provider`.
        public init(provider: String) {
            self.provider = provider
        }

        /// The failure count for `reason`.
        public func failures(_ reason: RefreshCoordinator.Event.FailureReason) -> Int {
            switch reason {
            case .invalidGrant: invalidGrant
            case .transient: transient
            }
        }
    }

    private let counts = Mutex<[String: Counts]>([:])

    /// Creates counters at zero.
    public init() {}

    /// Counts `event`: one attempt, and one failure of its reason when it failed.
    public func record(_ event: RefreshCoordinator.Event) {
        counts.withLock { table in
            var entry = table[event.provider] ?? Counts(provider: event.provider)
            entry.attempts += 1
            switch event.result {
            case .refreshed: break
            case .failed(.invalidGrant, _): entry.invalidGrant += 1
            case .failed(.transient, _): entry.transient += 1
            }
            table[event.provider] = entry
        }
    }

    /// Every provider's counters, sorted by provider name.
    public func snapshot() -> [Counts] {
        counts.withLock { $0.values.sorted { $0.provider < $1.provider } }
    }
}
