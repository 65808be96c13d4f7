import BrokerCore

/// A bounded LRU map of values read from Redis under key tracking, with the in-flight markers that keep it coherent; no I/O.
///
/// The cache is usable only while an invalidation connection is subscribed
/// (`redirect` is its client id); ``disable()`` and ``enable(redirect:)`` drop
/// every entry and start a new generation, since invalidations may have been
/// missed in between.
///
/// A read that misses first leaves a pending marker with a fresh token, then
/// asks Redis (which starts tracking the key for this replica). An
/// invalidation that arrives while the read is in flight removes the marker,
/// so ``fill(_:with:)`` finds its token gone and discards the fetched value,
/// which may predate the write behind the invalidation; the caller then
/// settles the key (``settle(_:seen:equal:)``) with what it fetched, since a
/// read started after the marker went may be in flight with an older answer.
/// Values are stored only
/// through that path, never after a write of our own: the write's
/// invalidation may already have consumed the key's tracking on the server,
/// and a value stored then would never be invalidated again.
///
/// `nil` values record a key known to be absent (Redis tracks those too).
/// Keys compare as exact bytes (``ExactKey``): account ids that are
/// canonically equivalent Unicode but differ in bytes are different accounts.
/// Recency is a doubly linked list over array slots; the least recently used
/// entry, pending or not, goes first when the cache is full.
struct TrackedReadCache<Value> {
    /// What a read should do.
    enum Lookup {
        /// Answer with this (nil: the key is known to be absent).
        case hit(Value?)
        /// Ask Redis with tracking, then hand the answer to ``fill(_:with:)`` (or ``abandon(_:)`` on failure).
        case miss(Ticket)
        /// Ask Redis without caching: the cache is off, or another read of this key is in flight.
        case bypass
    }

    /// A read in flight: which marker it left, under which generation and tracking redirect.
    struct Ticket: Sendable, Equatable {
        /// The key read.
        let key: String
        /// The marker's token.
        let token: UInt64
        /// The generation the read started in.
        let generation: UInt64
        /// The client id the read's tracking must send invalidations to.
        let redirect: Int
    }

    private enum Slot {
        case value(Value?)
        case pending(UInt64)
    }

    private struct Node {
        var key: ExactKey
        var slot: Slot
        var newer: Int
        var older: Int
    }

    /// The most entries held; 0 holds none.
    let capacity: Int
    /// The client id invalidations go to, nil while the cache is off.
    private(set) var redirect: Int?
    /// Bumped whenever every entry is dropped, so reads started before cannot fill.
    private(set) var generation: UInt64 = 0
    private var nextToken: UInt64 = 0
    private var nodes: [Node] = []
    private var index: [ExactKey: Int] = [:]
    private var freeSlots: [Int] = []
    /// The most recently used slot, or -1.
    private var newest = -1
    /// The least recently used slot, or -1.
    private var oldest = -1

    /// Creates an empty, disabled cache holding at most `capacity` entries.
    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Entries held, pending markers included.
    var count: Int { index.count }

    /// Whether the cache is in use.
    var isEnabled: Bool { redirect != nil && capacity > 0 }

    /// What a read of `key` should do; a hit becomes the most recently used entry, a miss leaves a pending marker.
    mutating func lookup(_ key: String) -> Lookup {
        guard let redirect, capacity > 0 else { return .bypass }
        if let slot = index[ExactKey(key)] {
            switch nodes[slot].slot {
            case .value(let value):
                touch(slot)
                return .hit(value)
            case .pending:
                return .bypass
            }
        }
        nextToken += 1
        insert(key, .pending(nextToken))
        return .miss(Ticket(key: key, token: nextToken, generation: generation, redirect: redirect))
    }

    /// The cached value of `key` without starting a read: `.some(value)` on a hit, nil otherwise.
    mutating func peek(_ key: String) -> Value?? {
        guard let slot = index[ExactKey(key)], case .value(let value) = nodes[slot].slot else { return nil }
        touch(slot)
        return .some(value)
    }

    /// Stores what the read of `ticket` found, unless an invalidation or a flush came first; returns whether it stored.
    @discardableResult
    mutating func fill(_ ticket: Ticket, with value: Value?) -> Bool {
        guard ticket.generation == generation, let slot = index[ExactKey(ticket.key)],
            case .pending(let token) = nodes[slot].slot, token == ticket.token
        else { return false }
        nodes[slot].slot = .value(value)
        return true
    }

    /// Removes the marker of a read that failed or was not tracked.
    mutating func abandon(_ ticket: Ticket) {
        guard let slot = index[ExactKey(ticket.key)], case .pending(let token) = nodes[slot].slot, token == ticket.token else { return }
        remove(slot)
    }

    /// Drops `key`, value or marker; returns whether it was held.
    @discardableResult
    mutating func invalidate(_ key: String) -> Bool {
        guard let slot = index[ExactKey(key)] else { return false }
        remove(slot)
        return true
    }

    /// After an uncached read of `key` found `seen`: keeps the entry only if it holds exactly that.
    ///
    /// A pending marker or a different value may stem from a read sent before
    /// that one, so it must not be answered after it: it is dropped.
    mutating func settle(_ key: String, seen: Value?, equal: (Value?, Value?) -> Bool) {
        guard let slot = index[ExactKey(key)] else { return }
        if case .value(let held) = nodes[slot].slot, equal(held, seen) { return }
        remove(slot)
    }

    /// Drops every entry and starts a new generation.
    mutating func invalidateAll() {
        nodes.removeAll(keepingCapacity: true)
        index.removeAll(keepingCapacity: true)
        freeSlots.removeAll(keepingCapacity: true)
        newest = -1
        oldest = -1
        generation += 1
    }

    /// Starts using the cache with invalidations going to client `redirect`; nothing held before survives.
    mutating func enable(redirect: Int) {
        invalidateAll()
        self.redirect = redirect
    }

    /// Stops using the cache and drops every entry: invalidations can no longer arrive.
    mutating func disable() {
        invalidateAll()
        redirect = nil
    }

    // MARK: - Recency list

    private mutating func insert(_ key: String, _ slot: Slot) {
        if index.count >= capacity, oldest >= 0 { remove(oldest) }
        let node = Node(key: ExactKey(key), slot: slot, newer: -1, older: newest)
        let position: Int
        if let free = freeSlots.popLast() {
            nodes[free] = node
            position = free
        } else {
            nodes.append(node)
            position = nodes.count - 1
        }
        if newest >= 0 { nodes[newest].newer = position }
        newest = position
        if oldest < 0 { oldest = position }
        index[node.key] = position
    }

    private mutating func touch(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        nodes[slot].older = newest
        nodes[slot].newer = -1
        if newest >= 0 { nodes[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private mutating func remove(_ slot: Int) {
        unlink(slot)
        index[nodes[slot].key] = nil
        nodes[slot].slot = .value(nil)
        nodes[slot].key = ExactKey("")
        freeSlots.append(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (nodes[slot].newer, nodes[slot].older)
        if newer >= 0 { nodes[newer].older = older } else { newest = older }
        if older >= 0 { nodes[older].newer = newer } else { oldest = newer }
        nodes[slot].newer = -1
        nodes[slot].older = -1
    }
}
