import Foundation
import Synchronization

/// What each configured OpenID provider's discovery document said, held in memory and filled in the background.
///
/// One per ``ProviderRegistry``, so every service built on the registry sees
/// a document as soon as it loads. A provider starts ``State/pending``; the
/// first document that passes the checks makes it ``State/loaded(_:)`` for
/// the life of the process; every failed try before that leaves
/// ``State/failed(_:)`` with the reason. Providers of other kinds, and OpenID
/// presets without credentials, are not tracked and nothing is fetched for them.
public final class OIDCDiscoveryCache: Sendable {
    /// Where one provider's document stands.
    public enum State: Sendable, Equatable {
        /// No try has finished yet.
        case pending
        /// The document loaded and passed every check.
        case loaded(OIDCProviderMetadata)
        /// The last try failed, for this reason (a phrase without secrets or the document's text).
        case failed(String)
    }

    /// The state of each tracked provider, keyed by its exact name.
    private let states: Mutex<[ExactKey: State]>

    /// Tracks `providers` (names), each pending.
    init(providers: [String]) {
        states = Mutex(Dictionary(providers.map { (ExactKey($0), State.pending) }, uniquingKeysWith: { first, _ in first }))
    }

    /// The state of `provider`, or nil when it is not a tracked OpenID provider.
    public func state(of provider: String) -> State? {
        states.withLock { $0[ExactKey(provider)] }
    }

    /// The tracked providers, sorted.
    public var providers: [String] {
        states.withLock { $0.keys.sorted().map(\.string) }
    }

    /// The loaded document of `provider`; throws ``BrokerError/providerUnavailable(_:reason:)`` with the reason while there is none.
    func metadata(for provider: String) throws(BrokerError) -> OIDCProviderMetadata {
        switch state(of: provider) {
        case .loaded(let metadata): return metadata
        case .failed(let reason): throw .providerUnavailable(provider, reason: "discovery failed: " + reason)
        case .pending, nil: throw .providerUnavailable(provider, reason: "discovery pending")
        }
    }

    /// Records the outcome of a try for a tracked `provider`; a loaded document is never replaced by a later failure.
    func record(_ state: State, for provider: String) {
        states.withLock { states in
            let key = ExactKey(provider)
            guard let current = states[key] else { return }
            if case .loaded = current, case .failed = state { return }
            states[key] = state
        }
    }
}
