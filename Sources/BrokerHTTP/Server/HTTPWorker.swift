import Dispatch
import Synchronization

/// A serial queue with the scratch memory its connections share while one of them runs.
///
/// `@unchecked Sendable`: `readBuffer` is only touched from `queue`, which is serial;
/// `metrics` is behind a `Mutex`.
final class HTTPWorker: @unchecked Sendable {
    /// The serial queue every connection of this worker runs on.
    let queue: DispatchQueue
    /// Where `recv` writes; parsed in place, leftovers are copied into the connection.
    let readBuffer: UnsafeMutableRawBufferPointer
    /// This worker's counters.
    let metrics: Mutex<HTTPMetricsShard>

    init(index: Int, routeCount: Int) {
        queue = DispatchQueue(label: "token-broker.http.worker.\(index)", qos: .userInitiated)
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        metrics = Mutex(HTTPMetricsShard(routeCount: routeCount))
    }

    deinit { readBuffer.deallocate() }
}
