import Foundation
import Testing

@testable import BrokerCore

/// The dispatcher's sleep: a signal wakes it at once, a signal that came first is not lost, the timeout and cancellation end it.
///
/// Waits that a signal or a cancellation must end are given an hour: the suite's time limit, not a measured bound,
/// fails a wait that was not ended, so a loaded machine cannot.
@Suite(.timeLimit(.minutes(2))) struct WakeSignalTests {
    static func seconds(_ body: () async -> Void) async -> Double {
        let started = ContinuousClock.now
        await body()
        let elapsed = started.duration(to: .now)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @Test func aSignalBeforeTheWaitEndsItAtOnceAndOnlyOnce() async {
        let signal = WakeSignal()
        signal.signal()
        signal.signal()
        await signal.wait(timeout: 3600)
        // Two signals while nobody waited count as one: the next wait runs to its timeout.
        #expect(await Self.seconds { await signal.wait(timeout: 0.2) } >= 0.2)
    }

    @Test func aSignalWakesAWaiter() async {
        let signal = WakeSignal()
        let waiter = Task { await signal.wait(timeout: 3600) }
        await Task.yield()
        signal.signal()
        await waiter.value
    }

    @Test func cancellationEndsAWait() async {
        let signal = WakeSignal()
        let waiter = Task { await signal.wait(timeout: 3600) }
        await Task.yield()
        waiter.cancel()
        await waiter.value
    }
}
