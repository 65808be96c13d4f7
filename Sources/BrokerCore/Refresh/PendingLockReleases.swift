import Synchronization

/// Lock releases that failed because the store did not answer, tried again until it does.
///
/// A refresh that holds a lock when its store goes away (a Redis restart, a
/// PostgreSQL primary killed before its standby is promoted) cannot give the
/// lock back, and the next refresh of that account would otherwise wait out the
/// lock's whole TTL. A lock remembers each such release here (by key and owner
/// token, so the retry deletes only its own lock, exactly as the first release
/// would have: a release that timed out but went through finds the lock gone or
/// held by another token, and deletes nothing), and a background task tries
/// them again with backoff — 50 ms doubling to at most 1 s — until the store
/// answers; taking the same key first tries its pending releases at once. So a
/// refresh after the store is back waits about the time the store takes to
/// answer again, not the TTL. An answered release leaves the list whether or
/// not it still owned the lock.
///
/// An acquire whose answer was lost (the connection broke after the command was
/// sent: a primary killed while its commit waited for the standby) may have taken
/// the lock with a token nobody holds; the lock remembers the release of that
/// token too (``rememberUncertainAcquire(key:token:)``). Deleting with a token
/// never handed out can only remove the lock that acquire wrote.
///
/// Bounded: at most ``capacity`` releases and as many uncertain acquires (each
/// kind dropping its own oldest first, so a flood of failed acquires during an
/// outage cannot push out a release), each
/// tried for at most ``horizon``. Retrying past a lock's TTL is harmless (the
/// token no longer matches) and giving up before it only falls back to the TTL,
/// so the horizon bounds the work, not correctness. The retry task runs only
/// while something is pending and ends at ``stop()``.
///
/// State is behind a mutex rather than in an actor: ``flush(key:)`` runs before
/// every acquire, and with nothing pending it costs one uncontended lock, no hop.
public final class PendingLockReleases: Sendable {
    /// The release this list retries: the lock's own compare-and-delete.
    public typealias Release = @Sendable (_ key: String, _ token: String) async throws(StoreError) -> Bool

    /// The most releases remembered, and the most uncertain acquires; the oldest of the kind is dropped beyond it.
    public let capacity: Int
    /// How long a release is retried before the lock's TTL is left to free it.
    public let horizon: Duration
    private let release: Release
    private let firstDelay: Duration
    private let maximumDelay: Duration
    private let now: @Sendable () -> ContinuousClock.Instant

    private struct Entry {
        let key: ExactKey
        let token: String
        /// When its release first failed.
        let since: ContinuousClock.Instant
        /// Whether it is the release of an acquire whose outcome is unknown, rather than of a lock surely held.
        let uncertain: Bool
    }

    private struct State {
        /// The failed releases, oldest first.
        var pending: [Entry] = []
        /// The task retrying ``pending`` while it is not empty.
        var retrying: Task<Void, Never>?
        /// After ``stop()``: nothing is remembered or retried.
        var stopped = false
    }

    private let state = Mutex(State())

    /// Creates an empty list that retries with `release`; `now` is the clock the horizon is measured on.
    public init(
        capacity: Int = 1024, horizon: Duration = .seconds(600), firstDelay: Duration = .milliseconds(50),
        maximumDelay: Duration = .seconds(1), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        release: @escaping Release
    ) {
        self.capacity = max(1, capacity)
        self.horizon = horizon
        self.firstDelay = firstDelay
        self.maximumDelay = max(firstDelay, maximumDelay)
        self.now = now
        self.release = release
    }

    /// How many releases wait for the store.
    public var count: Int { state.withLock { $0.pending.count } }

    /// Remembers that releasing `key` held by `token` failed, and starts retrying if nothing is.
    public func remember(key: String, token: String) {
        add(Entry(key: ExactKey(key), token: token, since: now(), uncertain: false))
    }

    /// Remembers that taking `key` with `token` failed after the command may have reached the store, so the lock may
    /// be held by a token no caller has; its release is retried like a failed one.
    public func rememberUncertainAcquire(key: String, token: String) {
        add(Entry(key: ExactKey(key), token: token, since: now(), uncertain: true))
    }

    private func add(_ entry: Entry) {
        state.withLock { s in
            guard !s.stopped else { return }
            s.pending.removeAll { $0.key == entry.key && $0.token == entry.token }
            s.pending.append(entry)
            if s.pending.count(where: { $0.uncertain == entry.uncertain }) > capacity,
                let oldest = s.pending.firstIndex(where: { $0.uncertain == entry.uncertain })
            {
                s.pending.remove(at: oldest)
            }
            if s.retrying == nil {
                s.retrying = Task { await self.retryUntilEmpty() }
            }
        }
    }

    /// Tries the pending releases of `key` now, if there are any: a lock about to be taken again should be free first.
    ///
    /// With nothing pending for `key` it returns without a suspension; it stops at the first release the store does not answer.
    public func flush(key: String) async {
        let exact = ExactKey(key)
        let tokens = state.withLock { s in
            s.pending.isEmpty ? [] : s.pending.filter { $0.key == exact }.map(\.token)
        }
        for token in tokens {
            guard await attempt(exact, token) else { return }
        }
    }

    /// Forgets every pending release and ends the retry task (the broker is shutting down; the TTLs free the locks).
    public func stop() {
        let task = state.withLock { s in
            s.stopped = true
            s.pending.removeAll()
            defer { s.retrying = nil }
            return s.retrying
        }
        task?.cancel()
    }

    /// Retries every pending release, pausing with backoff after a pass the store did not answer, until none is left.
    private func retryUntilEmpty() async {
        var delay = firstDelay
        while true {
            try? await Task.sleep(for: delay)
            let cutoff = now() - horizon
            let batch = state.withLock { s -> [Entry] in
                s.pending.removeAll { $0.since < cutoff }
                // Decided under the lock: a release remembered after this starts a new task.
                if s.pending.isEmpty || s.stopped || Task.isCancelled {
                    s.retrying = nil
                    return []
                }
                return s.pending
            }
            if batch.isEmpty { return }
            var answered = true
            for entry in batch {
                // Stop the pass at the first failure: the store is still away, the others would fail too.
                guard await attempt(entry.key, entry.token) else {
                    answered = false
                    break
                }
            }
            delay = answered ? firstDelay : min(delay * 2, maximumDelay)
        }
    }

    /// Releases one lock; forgets it when the store answered (whether or not the token still owned it).
    private func attempt(_ key: ExactKey, _ token: String) async -> Bool {
        do {
            _ = try await release(key.string, token)
        } catch {
            return false
        }
        state.withLock { s in s.pending.removeAll { $0.key == key && $0.token == token } }
        return true
    }
}
