import BrokerCore
import BrokerFileStore
import BrokerRedis
import Foundation

/// How many webhook events per second the outbox takes: events recorded through the sink, each durable before the next of its writer.
enum OutboxBench {
    /// Records events from `concurrency` writers for `seconds` into the journal in directory `target`, or into Redis when
    /// `target` is a `redis://` URL; prints `events=N seconds=S per_second=R` and the append latency's p50 and p99.
    static func run(target: String, seconds: Double, concurrency: Int) async throws {
        let outbox: any WebhookOutbox
        if target.hasPrefix("redis://") {
            outbox = RedisWebhookOutbox(client: RedisClient(url: try RedisURL(parsing: target), poolSize: 8))
        } else {
            outbox = try JournalWebhookOutbox(directory: target)
        }
        let sink = OutboxEventSink(outbox: outbox, urls: ["http://127.0.0.1:9/hooks"], now: { Date() })
        let deadline = ContinuousClock.now + .seconds(seconds)
        let started = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for writer in 0..<concurrency {
                group.addTask {
                    var mine: [Double] = []
                    var n = 0
                    while ContinuousClock.now < deadline {
                        var data = BrokerEventData(provider: "weibo")
                        data.accountID = "weibo:\(writer)-\(n)"
                        data.uid = "\(writer)-\(n)"
                        data.status = "active"
                        let t0 = ContinuousClock.now
                        try await sink.record(.accountConnected, data)
                        let elapsed = t0.duration(to: .now)
                        mine.append(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds))
                        n += 1
                    }
                    return mine
                }
            }
            var all: [Double] = []
            for try await part in group { all += part }
            return all.sorted()
        }
        let elapsed = started.duration(to: .now)
        let total = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        print(
            String(
                format: "events=%d seconds=%.1f per_second=%.0f append_p50_ms=%.2f append_p99_ms=%.2f",
                latencies.count, total, Double(latencies.count) / total, percentile(0.5) * 1000, percentile(0.99) * 1000))
    }
}
