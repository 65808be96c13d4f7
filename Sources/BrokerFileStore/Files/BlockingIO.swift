import BrokerCore
import Dispatch
import Synchronization

/// Runs blocking file system calls (write, fsync, rename) off Swift's cooperative thread pool.
///
/// The cooperative pool has one thread per core and serves every HTTP handler,
/// so a blocked fsync there stalls requests. A concurrent `DispatchQueue` is no
/// cure on Linux: it is not overcommitting and runs only about one block per
/// core at a time. Serial queues do overcommit, so this type spreads work over
/// a fixed set of serial lanes in turn, and that many fsyncs can overlap.
package enum BlockingIO {
    /// How many blocking calls can be in flight at once.
    static let laneCount = 16

    private static let lanes: [DispatchQueue] = (0..<laneCount).map {
        DispatchQueue(label: "token-broker.store.io.\($0)", qos: .userInitiated)
    }

    private static let nextLane = Atomic<Int>(0)

    /// Runs `work` on an I/O lane and returns its result to the awaiting task.
    package static func run<T: Sendable>(_ work: @escaping @Sendable () throws(StoreError) -> T) async throws(StoreError) -> T {
        let lane = lanes[nextLane.wrappingAdd(1, ordering: .relaxed).oldValue & (laneCount - 1)]
        let result: Result<T, StoreError> = await withCheckedContinuation { continuation in
            lane.async {
                do throws(StoreError) {
                    continuation.resume(returning: .success(try work()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
}
