import Foundation
import Testing

@testable import BrokerCore

/// The dispatcher's sleep: a signal wakes it at once, a signal that came first is not lost, the timeout and cancellation end it.
struct WakeSignalTests {
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
        #expect(await Self.seconds { await signal.wait(timeout: 30) } < 25)
        // Two signals while nobody waited count as one: the next wait runs to its timeout.
        #expect(await Self.seconds { await signal.wait(timeout: 0.2) } >= 0.2)
    }

    @Test func aSignalWakesAWaiter() async {
        let signal = WakeSignal()
        let waiter = Task { await Self.seconds { await signal.wait(timeout: 30) } }
        try? await Task.sleep(for: .milliseconds(50))
        signal.signal()
        #expect(await waiter.value < 25)
    }

    @Test func cancellationEndsAWait() async {
        let signal = WakeSignal()
        let waiter = Task { await Self.seconds { await signal.wait(timeout: 30) } }
        try? await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        #expect(await waiter.value < 25)
    }
}
