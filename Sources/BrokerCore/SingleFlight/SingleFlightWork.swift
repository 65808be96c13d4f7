import Foundation

/// What one key's replicated single flight does at each step; ``SingleFlight`` decides when each step runs.
///
/// `Observed` is what the work reads from the store shared with the other
/// replicas (an account, a cached app token); `Value` is what its callers
/// get. Every step but ``perform(_:)`` only looks at what it is given, so the
/// order of reads, lock and provider call lives in one place.
protocol SingleFlightWork: Sendable {
    /// What the work reads from the shared store.
    associatedtype Observed: Sendable
    /// What the work's callers get.
    associatedtype Value: Sendable

    /// The ``RefreshLock`` key that lets one replica at a time do the work; callers in one process are joined by it too.
    var lockKey: String { get }
    /// The ``RefreshBackoffStore`` key whose backoff holds the work back; nil when this call does not wait out a backoff.
    var backoffKey: String? { get }
    /// What the caller read before asking.
    var initial: Observed { get }

    /// Reads the shared store again: after a wait for another replica, and once the lock is held.
    func reread() async throws(BrokerError) -> Observed
    /// The answer when `observed` needs no work (another replica did it, or it is not due), or nil when it still does.
    func settled(_ observed: Observed) throws(BrokerError) -> Value?
    /// The answer while `backoff` holds the work back.
    func backingOff(_ observed: Observed, _ backoff: RefreshBackoff) throws(BrokerError) -> Value
    /// The answer to give at once while another replica holds the lock, or nil to wait for that replica's result.
    func meanwhile(_ observed: Observed) -> Value?
    /// The answer when the wait for another replica ran out.
    func gaveUp(_ observed: Observed) throws(BrokerError) -> Value
    /// Does the work (calls the provider and stores its answer), with the lock held and `observed` just re-read.
    func perform(_ observed: Observed) async throws(BrokerError) -> Value
}
