import Dispatch

/// Runs blocking test-harness work (process waits, probe sockets) on a Dispatch thread, not Swift's cooperative pool.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    let result: Result<T, any Error> = await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: Result { try work() }) }
    }
    return try result.get()
}
