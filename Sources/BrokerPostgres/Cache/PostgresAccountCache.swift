import BrokerCore
import Synchronization

/// Accounts this replica read from PostgreSQL, kept while the `LISTEN` connection says nothing changed them; no I/O.
///
/// Usable only while the listening session is up: ``enable()`` and ``disable()``
/// drop every entry and start a new generation, since notifications may have been
/// missed in between. A read that misses leaves a pending marker with a fresh
/// token, then reads the row; a notification (or a write of this replica) that
/// arrives meanwhile removes the marker, so ``fill(_:with:)`` finds its token gone
/// and drops what it read, which may predate the change. A read that found
/// another in flight (``Lookup/bypass``) reads without caching and then removes
/// that other's marker (``settle(_:)``): what it saw may be newer than what the
/// other will bring. `nil` values record an id known to be absent. Ids compare
/// as exact bytes (``ExactKey``). Past `capacity` entries, an arbitrary one goes.
public final class PostgresAccountCache: Sendable {
    /// What a read should do.
    enum Lookup {
        /// Answer with this (nil: known absent).
        case hit(Account?)
        /// Read the row, then ``fill(_:with:)`` (or ``abandon(_:)`` on failure).
        case miss(Ticket)
        /// Read the row without caching, then ``settle(_:)``: the cache is off, or another read of this id is in flight.
        case bypass
    }

    /// A read in flight.
    struct Ticket: Sendable {
        let key: ExactKey
        let token: UInt64
        let generation: UInt64
    }

    private enum Entry {
        case value(Account?)
        case pending(UInt64)
    }

    private struct State {
        var enabled = false
        var generation: UInt64 = 0
        var nextToken: UInt64 = 0
        var entries: [ExactKey: Entry] = [:]
        var hits: UInt64 = 0
        var misses: UInt64 = 0
        var flushes: UInt64 = 0
        var invalidations: UInt64 = 0
    }

    /// The most entries held.
    let capacity: Int
    private let state = Mutex(State())

    /// Creates an empty, disabled cache of at most `capacity` entries (0 caches nothing).
    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Whether reads are answered from memory now (the listening session is up).
    public var isEnabled: Bool { state.withLock { $0.enabled } }

    /// Hits, misses (reads that asked PostgreSQL while the cache was on), invalidations and flushes so far, and entries now.
    public var counts: (hits: UInt64, misses: UInt64, invalidations: UInt64, flushes: UInt64, entries: Int) {
        state.withLock { ($0.hits, $0.misses, $0.invalidations, $0.flushes, $0.entries.count) }
    }

    func lookup(_ id: String) -> Lookup {
        let key = ExactKey(id)
        return state.withLock { state in
            guard state.enabled, capacity > 0 else { return .bypass }
            switch state.entries[key] {
            case .value(let account)?:
                state.hits &+= 1
                return .hit(account)
            case .pending?:
                state.misses &+= 1
                return .bypass
            case nil:
                state.misses &+= 1
                if state.entries.count >= capacity,
                    let victim = state.entries.first(where: { if case .value = $0.value { true } else { false } })
                {
                    state.entries[victim.key] = nil
                }
                state.nextToken &+= 1
                state.entries[key] = .pending(state.nextToken)
                return .miss(Ticket(key: key, token: state.nextToken, generation: state.generation))
            }
        }
    }

    /// The cached account (`.some(nil)`: known absent), or nil when not cached; a found one counts as a hit (the
    /// HTTP layer serves it inline), a miss is counted by the ``lookup(_:)`` that follows.
    func peek(_ id: String) -> Account?? {
        state.withLock { state in
            guard state.enabled, case .value(let account)? = state.entries[ExactKey(id)] else { return nil }
            state.hits &+= 1
            return .some(account)
        }
    }

    /// Keeps what the read of `ticket` found, unless a change came meanwhile.
    func fill(_ ticket: Ticket, with account: Account?) {
        state.withLock { state in
            guard state.enabled, state.generation == ticket.generation, case .pending(let token)? = state.entries[ticket.key],
                token == ticket.token
            else { return }
            state.entries[ticket.key] = .value(account)
        }
    }

    /// Removes the marker of a read that failed.
    func abandon(_ ticket: Ticket) {
        state.withLock { state in
            if case .pending(let token)? = state.entries[ticket.key], token == ticket.token { state.entries[ticket.key] = nil }
        }
    }

    /// After a read that did not cache: a read in flight for the same id must not fill what may be older.
    func settle(_ id: String) {
        let key = ExactKey(id)
        state.withLock { state in
            if case .pending? = state.entries[key] { state.entries[key] = nil }
        }
    }

    /// Drops account `id`: it changed (a notification, or a write of this replica).
    func invalidate(_ id: String) {
        state.withLock { state in
            if state.entries.removeValue(forKey: ExactKey(id)) != nil { state.invalidations &+= 1 }
        }
    }

    /// Drops every entry (a notification with an empty payload); reads in flight do not fill.
    func flush() {
        state.withLock { state in
            state.entries = [:]
            state.generation &+= 1
            state.flushes &+= 1
        }
    }

    /// Starts caching from empty: the listening session is up.
    func enable() {
        state.withLock { state in
            state.entries = [:]
            state.generation &+= 1
            state.enabled = true
        }
    }

    /// Stops caching and drops everything: the listening session is lost, notifications may be missed.
    func disable() {
        state.withLock { state in
            if state.enabled { state.flushes &+= 1 }
            state.entries = [:]
            state.generation &+= 1
            state.enabled = false
        }
    }
}
