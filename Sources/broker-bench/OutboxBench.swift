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
        let result = try await TimedWriters.run(concurrency: concurrency, seconds: seconds) { writer, n in
            var data = BrokerEventData(provider: "weibo")
            data.accountID = "weibo:\(writer)-\(n)"
            data.uid = "\(writer)-\(n)"
            data.status = "active"
            try await sink.record(.accountConnected, data)
        }
        print(
            String(
                format: "events=%d seconds=%.1f per_second=%.0f append_p50_ms=%.2f append_p99_ms=%.2f",
                result.latencies.count, result.seconds, result.perSecond, result.percentile(0.5) * 1000,
                result.percentile(0.99) * 1000))
    }
}
