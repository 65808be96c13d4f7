import Synchronization

/// A mutual-exclusion lock per key that suspends waiting tasks instead of blocking threads.
///
/// Holders of different keys run in parallel; holders of one key run one at a
/// time in arrival order. The lock is handed straight to the next waiter on
/// release, so no waiter can be overtaken.
package final class KeyedAsyncLock: Sendable {
    /// For each held key, the tasks waiting for it in arrival order.
    private let waiters = Mutex<[ExactKey: [CheckedContinuation<Void, Never>]]>([:])

    /// Creates a lock with no key held.
    package init() {}

    /// Runs `body` while holding the lock for `key`.
    /// Keys are compared as exact bytes (``ExactKey``), like every identity in the broker.
    /// Whatever `body` throws propagates with its own type. Callers spell that type on the closure
    /// (`{ () async throws(StoreError) in … }`): Swift 6 infers a throwing closure's error type as `any Error`.
    package func withLock<T, Failure: Error>(_ key: String, _ body: () async throws(Failure) -> T) async throws(Failure) -> T {
        await acquire(ExactKey(key))
        defer { release(ExactKey(key)) }
        return try await body()
    }

    private func acquire(_ key: ExactKey) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = waiters.withLock { table -> Bool in
                if table[key] == nil {
                    table[key] = []
                    return true
                }
                table[key]!.append(continuation)
                return false
            }
            if acquired { continuation.resume() }
        }
    }

    private func release(_ key: ExactKey) {
        let next = waiters.withLock { table -> CheckedContinuation<Void, Never>? in
            guard var queue = table[key], !queue.isEmpty else {
                table[key] = nil
                return nil
            }
            let first = queue.removeFirst()
            table[key] = queue
            return first
        }
        next?.resume()
    }
}
