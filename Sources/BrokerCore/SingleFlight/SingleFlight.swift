import Foundation

/// One piece of work per key at a time: in this process, and across replicas through the ``RefreshLock``.
///
/// In the process, the first caller for a key starts the work as a task of
/// its own and later callers await that same task, so twenty concurrent
/// callers cause one provider call and all get its answer; a caller that goes
/// away does not cancel the others' work. Across replicas the task first
/// takes the shared lock; a replica that cannot get it re-reads the shared
/// store every ``RefreshCoordinator/Policy/pollInterval`` until the holder's
/// result shows up or the lock is free to take, and never does the work
/// meanwhile (RFC 9700 §4.14.2: a refresh token presented after it was rotated
/// out looks like theft). The wait ends after twice the lock TTL; the lock has
/// expired by then, so only a replica that keeps re-taking it makes this one
/// give up. Once the lock is held the store and the backoff are read again,
/// since the replica that held it may have just finished or failed.
///
/// Failures back off exponentially, lengthened by the provider's clamped
/// `Retry-After`, in a ``RefreshBackoffStore`` shared with the other replicas
/// (``SingleFlight+Backoff``). Account refreshes and app tokens each own one.
actor SingleFlight<Value: Sendable> {
    /// The lock shared with other replicas.
    nonisolated let lock: any RefreshLock
    /// The backoff shared with other replicas.
    nonisolated let backoffStore: any RefreshBackoffStore
    /// Lock TTL, polling, backoff and `Retry-After` settings.
    nonisolated let policy: RefreshCoordinator.Policy
    /// The injected clock that decides backoff.
    nonisolated let now: @Sendable () -> Date
    /// The clock that paces and ends the wait for another replica.
    nonisolated let waiting: WaitClock

    /// The work running in this process for each lock key, and how many callers await it.
    var running: [ExactKey: (task: Task<Result<Value, BrokerError>, Never>, callers: Int)] = [:]
    /// The backoff this process last recorded per backoff key: used only when ``backoffStore`` cannot be read.
    var lastRecorded: [ExactKey: RefreshBackoff] = [:]

    /// Creates a single flight; `waitingClock` paces the wait for another replica (the monotonic clock unless a test steps one by hand).
    init<C: Clock>(
        lock: any RefreshLock, backoffStore: any RefreshBackoffStore, policy: RefreshCoordinator.Policy,
        now: @escaping @Sendable () -> Date, waitingClock: C = ContinuousClock()
    ) where C.Duration == Duration {
        self.lock = lock
        self.backoffStore = backoffStore
        self.policy = policy
        self.now = now
        self.waiting = WaitClock(waitingClock)
    }

    /// Does `work`, or joins the same work already running in this process under its lock key.
    func run<Work: SingleFlightWork>(_ work: Work) async throws(BrokerError) -> Value where Work.Value == Value {
        let key = ExactKey(work.lockKey)
        if let joined = running[key] {
            running[key]?.callers += 1
            return try await joined.task.value.get()
        }
        // A task of its own, not the caller's: a caller that goes away does not cancel the others' work.
        let task = Task { await self.lead(work) }
        running[key] = (task, 1)
        let result = await task.value
        if running[key]?.task == task { running[key] = nil }
        return try result.get()
    }

    /// How many callers await the work running in this process under `lockKey`; 0 when none runs.
    func callers(of lockKey: String) -> Int {
        running[ExactKey(lockKey)]?.callers ?? 0
    }

    /// This process's one run of `work`, as a result so joined callers can share it.
    nonisolated func lead<Work: SingleFlightWork>(_ work: Work) async -> Result<Value, BrokerError> where Work.Value == Value {
        do throws(BrokerError) {
            if let key = work.backoffKey, let wait = await activeBackoff(key) {
                return .success(try work.backingOff(work.initial, wait))
            }
            return .success(try await leadAcrossReplicas(work))
        } catch {
            return .failure(error)
        }
    }

    /// Takes the cross-replica lock and does the work, or waits for the replica that holds it.
    nonisolated func leadAcrossReplicas<Work: SingleFlightWork>(_ work: Work) async throws(BrokerError) -> Value where Work.Value == Value {
        let timedOut = waiting.deadline(after: .seconds(policy.lockTTL * 2))
        var observed = work.initial
        while true {
            if let settled = try work.settled(observed) { return settled }
            if let owner = try await acquireLock(work.lockKey) {
                let value: Value
                do {
                    value = try await performHoldingLock(work)
                } catch {
                    await releaseLock(work.lockKey, owner: owner)
                    throw error
                }
                await releaseLock(work.lockKey, owner: owner)
                return value
            }
            if let answer = work.meanwhile(observed) { return answer }
            guard !timedOut() else { return try work.gaveUp(observed) }
            await waiting.sleep(.seconds(policy.pollInterval))
            observed = try await work.reread()
        }
    }

    /// With the lock held: re-reads the store and the backoff, since another replica may have just finished or failed, then does the work.
    nonisolated func performHoldingLock<Work: SingleFlightWork>(_ work: Work) async throws(BrokerError) -> Value where Work.Value == Value {
        let fresh = try await work.reread()
        if let settled = try work.settled(fresh) { return settled }
        if let key = work.backoffKey, let wait = await activeBackoff(key) { return try work.backingOff(fresh, wait) }
        return try await work.perform(fresh)
    }

    /// Takes the lock for ``RefreshCoordinator/Policy/lockTTL``; a lock store that cannot answer is a storage failure.
    nonisolated func acquireLock(_ key: String) async throws(BrokerError) -> String? {
        do { return try await lock.acquire(key: key, ttl: policy.lockTTL) } catch { throw BrokerError(error) }
    }

    /// Gives the lock back; if that fails, its TTL frees it.
    nonisolated func releaseLock(_ key: String, owner: String) async {
        _ = try? await lock.release(key: key, token: owner)
    }
}

/// A clock that paces and ends a wait, with its type erased so ``SingleFlight`` need not be generic over it.
struct WaitClock: Sendable {
    private let start: @Sendable (Duration) -> @Sendable () -> Bool
    private let pause: @Sendable (Duration) async -> Void

    /// Wraps `clock`.
    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        start = { length in
            let end = clock.now.advanced(by: length)
            return { clock.now >= end }
        }
        pause = { length in try? await clock.sleep(for: length) }
    }

    /// Starts a wait of `length`; the function returned says whether it has run out.
    func deadline(after length: Duration) -> @Sendable () -> Bool {
        start(length)
    }

    /// Pauses the caller for `length` (less if its task is cancelled).
    func sleep(_ length: Duration) async {
        await pause(length)
    }
}
