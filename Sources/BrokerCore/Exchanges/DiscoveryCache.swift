import Foundation
import Synchronization

/// What each configured OpenID provider's discovery document said, held in memory and filled in the background.
public typealias OIDCDiscoveryCache = DiscoveryCache<OIDCProviderMetadata>

/// What each tracked provider's discovered metadata said (an OpenID discovery document, a remote MCP server's
/// authorization), held in memory and filled in the background.
///
/// One per ``ProviderRegistry`` and kind, so every service built on the registry sees
/// a document as soon as it loads. A provider starts ``State/pending``; the
/// first document that passes the checks makes it ``State/loaded(_:)`` for
/// the life of the process; every failed try before that leaves
/// ``State/failed(_:)`` with the reason. Providers of other kinds, and OpenID
/// presets without credentials, are not tracked and nothing is fetched for them.
public final class DiscoveryCache<Document: Sendable & Equatable>: Sendable {
    /// Where one provider's document stands.
    public enum State: Sendable, Equatable {
        /// No try has finished yet.
        case pending
        /// The document loaded and passed every check.
        case loaded(Document)
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
    func metadata(for provider: String) throws(BrokerError) -> Document {
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

    /// Runs `attempt` for every one of `providers` until it returns true or the task is cancelled, each on its own backoff.
    ///
    /// After a failed try the next waits `initialDelay` seconds, doubling after
    /// each further failure up to `maximumDelay`, less up to a tenth at random so
    /// replicas started together spread out.
    static func keepTrying(
        _ providers: [String], initialDelay: Double, maximumDelay: Double, attempt: @escaping @Sendable (String) async -> Bool
    ) async {
        await withTaskGroup(of: Void.self) { group in
            for provider in providers {
                group.addTask {
                    var delay = max(initialDelay, 0.001)
                    while !Task.isCancelled {
                        if await attempt(provider) { return }
                        let wait = delay - Double.random(in: 0...(delay / 10))
                        try? await Task.sleep(nanoseconds: UInt64(min(wait, 86_400) * 1e9))
                        delay = min(delay * 2, maximumDelay)
                    }
                }
            }
        }
    }
}
