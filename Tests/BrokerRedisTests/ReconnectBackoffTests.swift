import Testing

@testable import BrokerRedis

/// The reconnect backoff: doubling waits from 50 ms, capped at 2 s, failing fast inside a wait, reset by success.
struct ReconnectBackoffTests {
    private let ms: UInt64 = 1_000_000

    @Test func waitsDoubleFromFiftyMillisecondsUpToTwoSeconds() {
        var backoff = ReconnectBackoff()
        var delays: [UInt64] = []
        for attempt in 0..<9 {
            delays.append(backoff.recordFailure("refused", now: UInt64(attempt) * 10_000 * ms) / ms)
        }
        #expect(delays == [50, 100, 200, 400, 800, 1600, 2000, 2000, 2000])
    }

    @Test func failsFastInsideTheWaitAndAttemptsAfterIt() {
        var backoff = ReconnectBackoff()
        #expect(backoff.decide(now: 0) == .attempt)
        backoff.recordFailure("connect to h:1: Connection refused", now: 1000 * ms)
        #expect(backoff.decide(now: 1000 * ms) == .failFast(lastError: "connect to h:1: Connection refused", delay: 50 * ms))
        #expect(backoff.decide(now: 1049 * ms) == .failFast(lastError: "connect to h:1: Connection refused", delay: 1 * ms))
        #expect(backoff.decide(now: 1050 * ms) == .attempt)
        backoff.recordFailure("again", now: 1050 * ms)
        #expect(backoff.decide(now: 1100 * ms) == .failFast(lastError: "again", delay: 50 * ms))
        #expect(backoff.decide(now: 1150 * ms) == .attempt)
    }

    @Test func successStartsOverFromTheShortestWait() {
        var backoff = ReconnectBackoff()
        for _ in 0..<5 { backoff.recordFailure("down", now: 0) }
        backoff.recordSuccess()
        #expect(backoff.state == .healthy)
        #expect(backoff.decide(now: 0) == .attempt)
        #expect(backoff.recordFailure("down", now: 0) == 50 * ms)
    }

    @Test func hugeFailureCountsStayAtTheCap() {
        let backoff = ReconnectBackoff()
        #expect(backoff.delay(afterFailures: 10_000) == 2000 * ms)
        #expect(backoff.delay(afterFailures: 64) == 2000 * ms)
    }
}
