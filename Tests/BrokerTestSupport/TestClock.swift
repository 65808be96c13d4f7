import Foundation
import Synchronization

/// A clock the test moves by hand, injected as `now`.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    /// Starts at `start` (default ``Date/fixture``).
    init(_ start: Date = .fixture) {
        current = Mutex(start)
    }

    /// The current reading.
    var now: Date { current.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    func advance(_ seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// The clock as the services take it.
    var function: @Sendable () -> Date {
        { [self] in now }
    }
}
