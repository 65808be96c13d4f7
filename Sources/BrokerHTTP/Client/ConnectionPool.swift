import Dispatch
import Synchronization

/// The keep-alive connections to one scheme + host + port, at most `cap` of them open or opening at once.
///
/// A call takes an idle connection (the most recently used first), or opens a new
/// one while under the cap, or waits in line. A connection that finishes an
/// exchange and may carry another goes to the first waiter or back to the idle
/// list; one that closes frees its place for the next waiter. Idle connections
/// close after `idleTimeout`.
///
/// A pool left with no connection, no waiter and no call about to ask
/// (``reserve()``) is unused: it tells its owner (`onUnused`), which drops
/// it from its table, so a client that calls many origins keeps pools only
/// for those it is using or holding idle connections to.
final class ConnectionPool: Sendable {
    /// What a call in line is given.
    enum Grant: Sendable {
        /// An idle connection to reuse.
        case reuse(ClientConnection)
        /// A place under the cap to open a new connection in.
        case open
        /// The wait ended without either.
        case failed(HTTPClientError)
    }

    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Grant, Never>
    }

    private struct State {
        var idle: [(connection: ClientConnection, since: UInt64)] = []
        var open = 0
        var waiters: [Waiter] = []
        var nextWaiter = 0
        /// Calls that found this pool in their client's table and have not yet reached ``acquire(deadline:)``.
        var reserved = 0
        /// Whether the idle sweep is scheduled.
        var sweepArmed = false

        /// No connection open or opening (idle ones count as open), nobody waiting, nobody about to ask.
        var isUnused: Bool { open == 0 && waiters.isEmpty && reserved == 0 }
    }

    let cap: Int
    let idleTimeout: Double
    private let state = Mutex(State())
    /// Told, outside the pool's lock, each time the pool becomes unused; it checks ``isUnused`` again under its own lock.
    private let onUnused: @Sendable (ConnectionPool) -> Void

    init(cap: Int, idleTimeout: Double, onUnused: @escaping @Sendable (ConnectionPool) -> Void = { _ in }) {
        self.cap = max(1, cap)
        self.idleTimeout = idleTimeout
        self.onUnused = onUnused
    }

    /// Connections open or opening now (for tests and metrics).
    var openCount: Int { state.withLock { $0.open } }

    /// Calls waiting in line for a connection (for tests and metrics).
    var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// Whether the pool has no connection, no waiter and no reserved call: its owner may drop it.
    var isUnused: Bool { state.withLock { $0.isUnused } }

    /// Holds the pool in use for a call that will ``acquire(deadline:)`` next; the owner calls it under the lock of
    /// its table, so a pool it finds there cannot be dropped before the call is in line.
    func reserve() {
        state.withLock { $0.reserved += 1 }
    }

    /// An idle connection, a place to open one, or (after waiting for either past `deadline`) `.failed(.deadline)`;
    /// ends the ``reserve()`` made for this call.
    ///
    /// Whatever it returns leaves the pool in use (a connection out, a place
    /// taken, or a waiter gone while others hold every place), so ending the reservation never makes it unused.
    ///
    /// An idle connection on `worker` (the caller's, when it runs on one) is taken before other idle ones: its answer
    /// is then read on the thread that waits for it.
    func acquire(deadline: UInt64, preferring worker: HTTPWorker? = nil) async -> Grant {
        // The usual case, an idle connection or a free place, is granted at once: no cancellation handler, no
        // continuation and no suspension of the task (they were about a tenth of a proxied call's instructions).
        if let grant = state.withLock({ s -> Grant? in
            guard let grant = Self.take(&s, preferring: worker, cap: cap) else { return nil }
            s.reserved = max(0, s.reserved - 1)
            return grant
        }) {
            return grant
        }
        let id = state.withLock { s -> Int in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Grant, Never>) in
                let grant = state.withLock { s -> Grant? in
                    s.reserved = max(0, s.reserved - 1)
                    if let grant = Self.take(&s, preferring: worker, cap: self.cap) { return grant }
                    s.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let grant { return continuation.resume(returning: grant) }
                ConnectionPool.timers.asyncAfter(
                    deadline: .now() + .nanoseconds(Int(min(deadline &- min(Monotonic.now(), deadline), UInt64(Int.max))))
                ) {
                    self.abandon(id, with: .deadline)
                }
            }
        } onCancel: {
            self.abandon(id, with: .cancelled)
        }
    }

    private static let timers = DispatchQueue(label: "token-broker.http.pool-timers")

    /// An idle connection (on `worker` first, else the most recently used) or a place under `cap`; nil when the
    /// caller must wait. Under the pool's lock.
    private static func take(_ s: inout State, preferring worker: HTTPWorker?, cap: Int) -> Grant? {
        if let worker, let i = s.idle.lastIndex(where: { $0.connection.worker === worker }) {
            return .reuse(s.idle.remove(at: i).connection)
        }
        if let last = s.idle.popLast() { return .reuse(last.connection) }
        if s.open < cap {
            s.open += 1
            return .open
        }
        return nil
    }

    private func abandon(_ id: Int, with error: HTTPClientError) {
        let waiter = state.withLock { s -> Waiter? in
            guard let index = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return s.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: .failed(error))
    }

    /// `connection` finished an exchange and may carry another.
    func checkIn(_ connection: ClientConnection) {
        let now = Monotonic.now()
        let (waiter, arm) = state.withLock { s -> (Waiter?, Bool) in
            if !s.waiters.isEmpty { return (s.waiters.removeFirst(), false) }
            s.idle.append((connection, now))
            defer { s.sweepArmed = true }
            return (nil, !s.sweepArmed)
        }
        if let waiter { return waiter.continuation.resume(returning: .reuse(connection)) }
        if arm { scheduleSweep(after: idleTimeout) }
    }

    /// One timer per pool, not one per check-in: it closes the connections idle for `idleTimeout`
    /// and comes back when the oldest of the others will be.
    private func scheduleSweep(after seconds: Double) {
        ConnectionPool.timers.asyncAfter(deadline: .now() + max(seconds, 0.001)) { [weak self] in self?.sweep() }
    }

    private func sweep() {
        let timeout = UInt64(max(idleTimeout, 0) * 1e9)
        let now = Monotonic.now()
        let (expired, next) = state.withLock { s -> ([ClientConnection], Double?) in
            let expired = s.idle.filter { now &- $0.since >= timeout }.map(\.connection)
            s.idle.removeAll { now &- $0.since >= timeout }
            guard let oldest = s.idle.map(\.since).min() else {
                s.sweepArmed = false
                return (expired, nil)
            }
            return (expired, Double(oldest &+ timeout &- now) / 1e9)
        }
        for connection in expired { connection.closeSoon(ifIdle: true) }
        if let next { scheduleSweep(after: next) }
    }

    /// `connection` closed (or never connected): its place goes to the first waiter; the owner hears when that leaves
    /// the pool unused.
    func closed(_ connection: ClientConnection) {
        let (waiter, unused) = state.withLock { s -> (Waiter?, Bool) in
            s.idle.removeAll { $0.connection === connection }
            s.open -= 1
            guard !s.waiters.isEmpty else { return (nil, s.isUnused) }
            s.open += 1
            return (s.waiters.removeFirst(), false)
        }
        waiter?.continuation.resume(returning: .open)
        if unused { onUnused(self) }
    }
}
