import Foundation

/// Runs blocking test-harness work (process waits, probe sockets) on a thread of its own, not Swift's cooperative pool.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    let result: Result<T, any Error> = await withCheckedContinuation { continuation in
        // A thread of its own: Dispatch's global queue runs only about one blocking job per core.
        Thread { continuation.resume(returning: Result { try work() }) }.start()
    }
    return try result.get()
}

/// ``offPool(_:)`` for work that cannot fail.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}
