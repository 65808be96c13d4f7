import Synchronization

/// A monotonic `Clock` the test moves by hand: a sleep ends only when ``advance(by:)`` passes its deadline.
///
/// Code that paces itself with an injected clock (a poll interval, a
/// deadline) runs one step per advance, so a test orders its steps by events
/// and never by how long the machine took.
public final class ManualClock: Clock, Sendable {
    /// A reading: the time advanced since the clock was made.
    public struct Instant: InstantProtocol {
        /// Time since the clock was made.
        public var offset: Duration

        /// The reading `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this reading to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let id: Int
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Sleeper] = []
        var cancelled: Set<Int> = []
    }

    private let state = Mutex(State())
    /// Signalled as each sleep starts waiting, so a test knows the code reached its pause.
    public let sleeps = TestEvent()

    /// Creates a clock at offset zero.
    public init() {}

    /// The current reading.
    public var now: Instant { state.withLock { $0.now } }
    /// The clock has no granularity of its own.
    public var minimumResolution: Duration { .zero }

    /// Waits until the clock is advanced to `deadline`; a deadline already reached returns at once.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { s -> Result<Void, any Error>? in
                    if s.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= s.now { return .success(()) }
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let outcome {
                    continuation.resume(with: outcome)
                } else {
                    sleeps.signal()
                }
            }
        } onCancel: {
            let stranded = state.withLock { s -> CheckedContinuation<Void, any Error>? in
                guard let index = s.sleepers.firstIndex(where: { $0.id == id }) else {
                    s.cancelled.insert(id)
                    return nil
                }
                return s.sleepers.remove(at: index).continuation
            }
            stranded?.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration` and wakes every sleep whose deadline it reaches.
    public func advance(by duration: Duration) {
        let woken = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
            s.now = s.now.advanced(by: duration)
            let now = s.now
            let due = s.sleepers.filter { $0.deadline <= now }
            s.sleepers.removeAll { $0.deadline <= now }
            return due.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }
}
