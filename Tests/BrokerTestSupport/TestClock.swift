import Foundation
import Synchronization

/// A wall clock the test moves by hand, injected as `now`.
public final class TestClock: Sendable {
    private let current: Mutex<Date>

    /// Starts at `start` (default ``Foundation/Date/fixture``).
    public init(_ start: Date = .fixture) {
        current = Mutex(start)
    }

    /// The current reading.
    public var now: Date { current.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(_ seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// The clock as the services take it.
    public var function: @Sendable () -> Date {
        { [self] in now }
    }
}
