import BrokerCore
import Synchronization

/// The accounts one replica holds in memory, kept coherent by Redis client-side caching (key tracking); safe to share.
///
/// A dedicated connection runs `CLIENT ID` and `SUBSCRIBE __redis__:invalidate`
/// (RESP2 tracking with `REDIRECT`); pooled connections turn tracking on with
/// `CLIENT TRACKING ON REDIRECT <that id> OPTIN` and precede each cached read
/// with `CLIENT CACHING yes`, so Redis remembers which account keys this
/// replica holds and pushes their names on the invalidation connection as soon
/// as anyone writes them. The cache is used only while that connection is
/// subscribed: losing it drops every entry and reads go to Redis until it is
/// re-established. See ``TrackedReadCache`` for how a read in flight and an
/// invalidation are ordered.
public final class RedisAccountCache: Sendable {
    /// The channel Redis pushes invalidations on in RESP2.
    static let channel = "__redis__:invalidate"

    private let state: Mutex<TrackedReadCache<Account>>
    /// Hits, misses, invalidations and the state of tracking.
    let metrics: RedisMetrics
    /// The prefix of account keys (`tb:account:`); invalidations of other keys are ignored.
    let accountKeyPrefix: String
    /// The invalidation connection.
    private let subscription: Mutex<RedisSubscription?> = Mutex(nil)

    /// Creates a stopped cache of at most `capacity` accounts for keys starting with `accountKeyPrefix`.
    init(capacity: Int, accountKeyPrefix: String, metrics: RedisMetrics) {
        self.state = Mutex(TrackedReadCache(capacity: capacity))
        self.accountKeyPrefix = accountKeyPrefix
        self.metrics = metrics
    }

    /// Opens the invalidation connection to `target` (the primary, with Sentinel); the cache is used from the moment it is subscribed.
    func start(target: RedisTarget, timeout: Double) {
        let subscription = RedisSubscription(
            target: target, timeout: timeout,
            commands: [RedisCommand("CLIENT", "ID"), RedisCommand("SUBSCRIBE", Self.channel)], replies: 2,
            label: "token-broker.redis.invalidations", metrics: metrics
        ) { [weak self] event in self?.handle(event) }
        let previous = self.subscription.withLock { current in
            defer { current = subscription }
            return current
        }
        previous?.stop()
        subscription.start()
    }

    /// Closes the invalidation connection; the cache is dropped and no longer used.
    func stop() {
        subscription.withLock { $0 }?.stop()
        state.withLock { $0.disable() }
        metrics.recordTracking(up: false)
        metrics.setEntries(0)
    }

    /// What the invalidation connection reports.
    func handle(_ event: RedisSubscriptionEvent) {
        switch event {
        case .established(let replies):
            guard let id = replies.first?.integer else { return }
            state.withLock { $0.enable(redirect: id) }
            metrics.recordTracking(up: true)
            metrics.recordFlush()
            metrics.setEntries(0)
        case .lost:
            let wasUp = state.withLock { cache in
                defer { cache.disable() }
                return cache.isEnabled
            }
            if wasUp { metrics.recordFlush() }
            metrics.recordTracking(up: false)
            metrics.setEntries(0)
        case .message(let channel, let payload):
            guard channel == Self.channel else { return }
            invalidate(payload)
        }
    }

    /// Drops the keys an invalidation names; a nil payload (`FLUSHALL`, `FLUSHDB`) drops everything.
    private func invalidate(_ payload: RESPValue) {
        guard let keys = payload.array else {
            state.withLock { $0.invalidateAll() }
            metrics.recordFlush()
            metrics.setEntries(0)
            return
        }
        let ids = keys.compactMap { key -> String? in
            guard let name = key.string, name.hasPrefix(accountKeyPrefix) else { return nil }
            return String(name.dropFirst(accountKeyPrefix.count))
        }
        guard !ids.isEmpty else { return }
        let (dropped, count) = state.withLock { cache in
            (ids.reduce(0) { $0 + (cache.invalidate($1) ? 1 : 0) }, cache.count)
        }
        metrics.recordInvalidations(dropped)
        metrics.setEntries(count)
    }

    // MARK: - Reads and writes

    /// What a read of account `id` should do; hits and misses are counted.
    func lookup(_ id: String) -> TrackedReadCache<Account>.Lookup {
        let lookup = state.withLock { $0.lookup(id) }
        switch lookup {
        case .hit: metrics.recordHit()
        case .miss: metrics.recordMiss()
        case .bypass: break
        }
        return lookup
    }

    /// The cached account `id` without asking Redis: `.some(account or nil)` on a hit, nil when not cached.
    func peek(_ id: String) -> Account?? {
        let value = state.withLock { $0.peek(id) }
        if value != nil { metrics.recordHit() }
        return value
    }

    /// Stores what a tracked read found, unless it was invalidated meanwhile; then settles the key as a bypassing read does.
    ///
    /// A read whose marker is gone (invalidated, evicted, or from an earlier generation) may still have seen a
    /// newer value than another read of the key that started after its marker went and is in flight now, its GET
    /// answered by Redis first. It returns what it saw to its caller, so it must leave nothing older behind: as
    /// ``settle(_:seen:)`` does, it drops that other read's marker (or a different value). Without this, that
    /// other read's fill succeeded whenever the write's invalidation had not yet arrived on the subscription, and
    /// the next hit answered an older account than one already returned ("read 353 after 354").
    func fill(_ ticket: TrackedReadCache<Account>.Ticket, with account: Account?) {
        let count = state.withLock { cache in
            if !cache.fill(ticket, with: account) { cache.settle(ticket.key, seen: account, equal: ==) }
            return cache.count
        }
        metrics.setEntries(count)
    }

    /// Forgets a read that failed.
    func abandon(_ ticket: TrackedReadCache<Account>.Ticket) {
        state.withLock { $0.abandon(ticket) }
    }

    /// Forgets a read that found `account` but was not tracked, settling the key as ``fill(_:with:)`` does when it cannot store.
    func abandon(_ ticket: TrackedReadCache<Account>.Ticket, seen account: Account?) {
        let count = state.withLock { cache in
            cache.abandon(ticket)
            cache.settle(ticket.key, seen: account, equal: ==)
            return cache.count
        }
        metrics.setEntries(count)
    }

    /// After a read that bypassed the cache found `seen`: drops the entry unless it holds exactly that.
    func settle(_ id: String, seen: Account?) {
        let count = state.withLock { cache in
            cache.settle(id, seen: seen, equal: ==)
            return cache.count
        }
        metrics.setEntries(count)
    }

    /// Drops account `id` after a write of this replica, before the write is acknowledged.
    func forget(_ id: String) {
        let count = state.withLock { cache in
            cache.invalidate(id)
            return cache.count
        }
        metrics.setEntries(count)
    }

    /// Whether the cache is in use now (the invalidation connection is subscribed).
    var isEnabled: Bool { state.withLock { $0.isEnabled } }
}
