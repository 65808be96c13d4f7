import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerCore

/// ``SingleFlight`` on its own: joining callers, waiting for another replica's lock, re-reading, and backing off.
///
/// A "replica" here is a flight over the same lock and shelf; the other
/// replica is the test itself holding the lock. Steps are ordered by events:
/// a gate the work waits at, the flight's count of joined callers, and a
/// ``ManualClock`` whose sleeps end only when the test advances it.
struct SingleFlightTests {
    /// The store shared with the other replicas: one value, and how often the work ran.
    final class Shelf: Sendable {
        private let state = Mutex<(value: String?, performs: Int, rereads: Int)>((nil, 0, 0))
        var value: String? {
            get { state.withLock { $0.value } }
            set { state.withLock { $0.value = newValue } }
        }
        var performs: Int { state.withLock { $0.performs } }
        var rereads: Int { state.withLock { $0.rereads } }
        func countPerform() -> Int {
            state.withLock {
                $0.performs += 1; return $0.performs
            }
        }
        func reread() -> String? {
            state.withLock {
                $0.rereads += 1; return $0.value
            }
        }
    }

    /// A gate the work waits at until the test opens it.
    actor Gate {
        private var isOpen = false
        private var waiting: [CheckedContinuation<Void, Never>] = []
        func wait() async {
            if !isOpen { await withCheckedContinuation { waiting.append($0) } }
        }
        func open() {
            isOpen = true
            for continuation in waiting { continuation.resume() }
            waiting = []
        }
    }

    /// What the test work does when it runs.
    enum Answer: Sendable {
        /// Stores and returns a new value.
        case issue
        /// Fails with a provider error and this `Retry-After` field.
        case fail(retryAfter: String?)
    }

    /// Work whose stored value settles it: present means done (by this or another replica).
    struct Work: SingleFlightWork {
        let flight: SingleFlight<String>
        let shelf: Shelf
        var answer: Answer = .issue
        var gate: Gate?
        var entered: TestEvent?

        var lockKey: String { "test:key" }
        var backoffKey: String? { "test:key" }
        var initial: String? { nil }

        func reread() async -> String? { shelf.reread() }
        func settled(_ observed: String?) -> String? { observed }
        func backingOff(_ observed: String?, _ backoff: RefreshBackoff) throws(BrokerError) -> String { throw backoff.lastError }
        func meanwhile(_ observed: String?) -> String? { nil }
        func gaveUp(_ observed: String?) throws(BrokerError) -> String { throw .upstreamTimeout(step: "test") }

        func perform(_ observed: String?) async throws(BrokerError) -> String {
            let n = shelf.countPerform()
            entered?.signal()
            await gate?.wait()
            switch answer {
            case .issue:
                shelf.value = "value-\(n)"
                return "value-\(n)"
            case .fail(let retryAfter):
                let failure = RefreshFailure(.upstreamError(step: "test", reason: "HTTP 503"), retryAfter: retryAfter)
                await flight.recordFailure(failure, for: "test:key")
                throw failure.error
            }
        }
    }

    static let policy = RefreshCoordinator.Policy(lockTTL: 30, pollInterval: 1, backoffBase: 10, backoffCap: 300, retryAfterCap: 600)

    static func flight(
        lock: any RefreshLock, clock: TestClock, waiting: ManualClock = ManualClock(),
        backoffStore: (any RefreshBackoffStore)? = nil
    ) -> SingleFlight<String> {
        SingleFlight(
            lock: lock, backoffStore: backoffStore ?? InProcessRefreshBackoffStore(now: clock.function), policy: policy,
            now: clock.function, waitingClock: waiting)
    }

    /// What `flight.run(work)` came to.
    static func attempt(_ flight: SingleFlight<String>, _ work: Work) async -> Result<String, BrokerError> {
        do throws(BrokerError) { return .success(try await flight.run(work)) } catch { return .failure(error) }
    }

    @Test func twentyCallersInOneProcessShareOneRunAndItsValue() async throws {
        let clock = TestClock()
        let flight = Self.flight(lock: InProcessRefreshLock(now: clock.function), clock: clock)
        let (shelf, gate, entered) = (Shelf(), Gate(), TestEvent())
        let work = Work(flight: flight, shelf: shelf, gate: gate, entered: entered)
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await flight.run(work) } }
            #expect(await entered.wait(timeout: 30))
            #expect(await eventually(timeout: 30) { await flight.callers(of: work.lockKey) == 20 })
            await gate.open()
            var values: [String] = []
            for try await value in group { values.append(value) }
            #expect(values == Array(repeating: "value-1", count: 20))
        }
        #expect(shelf.performs == 1)
        #expect(await flight.callers(of: work.lockKey) == 0)
    }

    @Test func aFailureReachesEveryJoinedCallerAndTheLockIsGivenBack() async throws {
        let clock = TestClock()
        let lock = InProcessRefreshLock(now: clock.function)
        let flight = Self.flight(lock: lock, clock: clock)
        let (shelf, gate, entered) = (Shelf(), Gate(), TestEvent())
        let work = Work(flight: flight, shelf: shelf, answer: .fail(retryAfter: nil), gate: gate, entered: entered)
        let callers = (0..<3).map { _ in Task { await Self.attempt(flight, work) } }
        #expect(await entered.wait(timeout: 30))
        #expect(await eventually(timeout: 30) { await flight.callers(of: work.lockKey) == 3 })
        await gate.open()
        for caller in callers { #expect(await caller.value == .failure(.upstreamError(step: "test", reason: "HTTP 503"))) }
        #expect(shelf.performs == 1)
        #expect(await lock.acquire(key: work.lockKey, ttl: 1) != nil, "the lock was released after the failure")
    }

    @Test func whileAnotherReplicaHoldsTheLockItsResultIsReReadNotRedone() async throws {
        let clock = TestClock()
        let waiting = ManualClock()
        let lock = InProcessRefreshLock(now: clock.function)
        let flight = Self.flight(lock: lock, clock: clock, waiting: waiting)
        let shelf = Shelf()
        let work = Work(flight: flight, shelf: shelf)
        let other = try #require(await lock.acquire(key: work.lockKey, ttl: 30))
        let caller = Task { try await flight.run(work) }
        // Refused the lock, the caller pauses for one poll interval.
        #expect(await waiting.sleeps.wait(count: 1, timeout: 30))
        // The other replica stores its result and lets go; the next poll reads it.
        shelf.value = "theirs"
        #expect(await lock.release(key: work.lockKey, token: other))
        waiting.advance(by: .seconds(1))
        #expect(try await caller.value == "theirs")
        #expect(shelf.performs == 0)
        #expect(shelf.rereads == 1)
    }

    @Test func whenTheHolderLetsGoWithoutAResultTheWaiterTakesTheLockAndDoesTheWorkOnce() async throws {
        let clock = TestClock()
        let waiting = ManualClock()
        let lock = InProcessRefreshLock(now: clock.function)
        let flight = Self.flight(lock: lock, clock: clock, waiting: waiting)
        let shelf = Shelf()
        let work = Work(flight: flight, shelf: shelf)
        let other = try #require(await lock.acquire(key: work.lockKey, ttl: 30))
        let caller = Task { try await flight.run(work) }
        #expect(await waiting.sleeps.wait(count: 1, timeout: 30))
        #expect(await lock.release(key: work.lockKey, token: other))
        waiting.advance(by: .seconds(1))
        #expect(try await caller.value == "value-1")
        #expect(shelf.performs == 1)
        // Once after the poll, once more with the lock held.
        #expect(shelf.rereads == 2)
    }

    @Test func theLockIsReReadOnceHeldSoAResultStoredJustBeforeIsNotRedone() async throws {
        let clock = TestClock()
        let flight = Self.flight(lock: InProcessRefreshLock(now: clock.function), clock: clock)
        let shelf = Shelf()
        // The caller read nothing, but another replica stored a value before this one took the lock.
        shelf.value = "theirs"
        #expect(try await flight.run(Work(flight: flight, shelf: shelf)) == "theirs")
        #expect(shelf.performs == 0)
    }

    @Test func theWaitForAnotherReplicaEndsAfterTwiceTheLockTTL() async throws {
        let clock = TestClock()
        let waiting = ManualClock()
        let lock = InProcessRefreshLock(now: clock.function)
        let flight = Self.flight(lock: lock, clock: clock, waiting: waiting)
        let shelf = Shelf()
        let work = Work(flight: flight, shelf: shelf)
        _ = try #require(await lock.acquire(key: work.lockKey, ttl: 30))
        let caller = Task { await Self.attempt(flight, work) }
        // 59 polls of one second each are still within 2 × 30 s.
        for poll in 1...59 {
            #expect(await waiting.sleeps.wait(count: poll, timeout: 30))
            waiting.advance(by: .seconds(1))
        }
        #expect(await waiting.sleeps.wait(count: 60, timeout: 30), "still waiting after 59 s")
        waiting.advance(by: .seconds(1))
        #expect(await caller.value == .failure(.upstreamTimeout(step: "test")))
        #expect(shelf.performs == 0)
        #expect(shelf.rereads == 60)
    }

    @Test func aFailureBacksOffForTheLongerOfTheExponentialDelayAndTheClampedRetryAfter() async throws {
        let clock = TestClock()
        let flight = Self.flight(lock: InProcessRefreshLock(now: clock.function), clock: clock)
        let shelf = Shelf()
        let start = clock.now
        var work = Work(flight: flight, shelf: shelf, answer: .fail(retryAfter: "120"))
        #expect(await Self.attempt(flight, work) == .failure(.upstreamError(step: "test", reason: "HTTP 503")))
        #expect(await flight.activeBackoff("test:key")?.notBefore == start.addingTimeInterval(120))
        #expect(await flight.retryAfterSeconds("test:key") == 120)
        clock.advance(119.5)
        #expect(await flight.retryAfterSeconds("test:key") == 1, "a part of a second left rounds up")
        // While it lasts the work does not run, and callers get the last error.
        work.answer = .issue
        #expect(await Self.attempt(flight, work) == .failure(.upstreamError(step: "test", reason: "HTTP 503")))
        #expect(shelf.performs == 1)
        // After it, the next try runs; it fails again, asking for a day: clamped to the cap of 600 s.
        clock.advance(0.5)
        #expect(await flight.retryAfterSeconds("test:key") == nil)
        work.answer = .fail(retryAfter: "86400")
        #expect(await Self.attempt(flight, work) == .failure(.upstreamError(step: "test", reason: "HTTP 503")))
        let second = try #require(await flight.activeBackoff("test:key"))
        #expect(second.failures == 2)
        #expect(second.notBefore == clock.now.addingTimeInterval(600))
        // A success clears it.
        clock.advance(600)
        work.answer = .issue
        #expect(try await flight.run(work) == "value-3")
        #expect(await flight.activeBackoff("test:key") == nil)
    }

    @Test func aBackoffStoreThatCannotBeReadLeavesThisProcessesOwnRecordInForce() async throws {
        let clock = TestClock()
        let flight = Self.flight(lock: InProcessRefreshLock(now: clock.function), clock: clock, backoffStore: UnreachableBackoffStore())
        let shelf = Shelf()
        var work = Work(flight: flight, shelf: shelf, answer: .fail(retryAfter: nil))
        #expect(await Self.attempt(flight, work) == .failure(.upstreamError(step: "test", reason: "HTTP 503")))
        work.answer = .issue
        #expect(await Self.attempt(flight, work) == .failure(.upstreamError(step: "test", reason: "HTTP 503")))
        #expect(shelf.performs == 1)
        clock.advance(10)
        #expect(try await flight.run(work) == "value-2")
    }
}

/// A backoff store whose every call fails, as Redis does while it is down.
struct UnreachableBackoffStore: RefreshBackoffStore {
    func backoff(for accountID: String) async throws(StoreError) -> RefreshBackoff? { throw StoreError.unavailable("down") }
    func record(_ backoff: RefreshBackoff, for accountID: String, at now: Date) async throws(StoreError) {
        throw StoreError.unavailable("down")
    }
    func clear(accountID: String) async throws(StoreError) { throw StoreError.unavailable("down") }
}
