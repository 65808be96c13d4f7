import Foundation
import Synchronization

/// Where the clients the broker registered at remote MCP servers' authorization servers are kept, shared by every
/// replica of the store and kept across restarts.
///
/// ``add(_:)`` is a compare-and-set: the first registration stored under a key stays, and every later one gets
/// the first back, so replicas that raced still use one client. Every failure is a ``StoreError``.
public protocol ClientRegistrationStore: Sendable {
    /// The registration stored under `key` (``ClientRegistration/key``), or nil.
    func registration(for key: String) async throws(StoreError) -> ClientRegistration?
    /// Stores `registration` under its key unless one is there already; returns the one the store keeps.
    func add(_ registration: ClientRegistration) async throws(StoreError) -> ClientRegistration
}

/// A ``ClientRegistrationStore`` in this process's memory, for tests and embedders (a restart forgets it).
public final class InProcessClientRegistrationStore: ClientRegistrationStore {
    /// Each key's registration.
    private let table = Mutex<[ExactKey: ClientRegistration]>([:])

    /// Creates an empty store.
    public init() {}

    /// The registration under `key`.
    public func registration(for key: String) async -> ClientRegistration? {
        table.withLock { $0[ExactKey(key)] }
    }

    /// Keeps `registration` unless its key has one; returns the kept one.
    public func add(_ registration: ClientRegistration) async -> ClientRegistration {
        table.withLock { entries in
            if let kept = entries[ExactKey(registration.key)] { return kept }
            entries[ExactKey(registration.key)] = registration
            return registration
        }
    }
}
