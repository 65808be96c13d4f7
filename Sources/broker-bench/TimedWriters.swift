/// Writers that repeat one operation until a deadline, each timing its own calls: what the outbox benchmarks share.
enum TimedWriters {
    /// What the writers did: every call's latency in seconds, sorted, and the run's length.
    struct Result {
        /// Each call's latency in seconds, shortest first.
        var latencies: [Double]
        /// Seconds from the first start to the last finish.
        var seconds: Double

        /// Calls per second over the run.
        var perSecond: Double { seconds > 0 ? Double(latencies.count) / seconds : 0 }

        /// The latency at quantile `p` (0…1), in seconds; 0 without calls.
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
    }

    /// Runs `concurrency` writers for `seconds`; writer `w` calls `operation(w, n)` for n = 0, 1, … one after another.
    static func run(
        concurrency: Int, seconds: Double, _ operation: @escaping @Sendable (_ writer: Int, _ n: Int) async throws -> Void
    ) async throws -> Result {
        let deadline = ContinuousClock.now + .seconds(seconds)
        let started = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for writer in 0..<concurrency {
                group.addTask {
                    var mine: [Double] = []
                    var n = 0
                    while ContinuousClock.now < deadline {
                        let t0 = ContinuousClock.now
                        try await operation(writer, n)
                        mine.append(Self.seconds(t0.duration(to: .now)))
                        n += 1
                    }
                    return mine
                }
            }
            var all: [Double] = []
            for try await part in group { all += part }
            return all.sorted()
        }
        return Result(latencies: latencies, seconds: Self.seconds(started.duration(to: .now)))
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
