import Synchronization

/// A monotonic clock in nanoseconds that moves only when a test advances it.
final class ManualClock: Sendable {
    private let nanoseconds = Mutex<UInt64>(1_000_000_000)

    /// The current reading.
    @Sendable func now() -> UInt64 {
        nanoseconds.withLock { $0 }
    }

    /// Moves the clock forward by `delta` nanoseconds.
    func advance(by delta: UInt64) {
        nanoseconds.withLock { $0 += delta }
    }
}
