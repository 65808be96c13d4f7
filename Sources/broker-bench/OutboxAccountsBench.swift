import BrokerCore
import BrokerFileStore
import BrokerRedis
import Foundation

/// How many account changes with their webhook event the store makes durable per second: sign-ins of new accounts,
/// each written with its `account.connected` event, each durable before the next of its writer.
enum OutboxAccountsBench {
    /// Writes from `concurrency` writers for `seconds` into the data directory `target`, or Redis when `target` is a
    /// `redis://` URL; `separate` writes the account first and the event after (two steps, as before events rode
    /// with their change). Prints `changes=N seconds=S per_second=R` and the latency's p50 and p99.
    static func run(target: String, seconds: Double, concurrency: Int, separate: Bool) async throws {
        let accounts: any AccountRepository
        let outbox: any WebhookOutbox
        if target.hasPrefix("redis://") {
            let client = RedisClient(url: try RedisURL(parsing: target), poolSize: 8)
            accounts = RedisAccountRepository(client: client)
            outbox = RedisWebhookOutbox(client: client)
        } else {
            accounts = try JSONFileAccountRepository(directory: target)
            outbox = try JournalWebhookOutbox(directory: target)
        }
        let sink = OutboxEventSink(outbox: outbox, urls: ["http://127.0.0.1:9/hooks"], now: { Date() })
        let event: AccountChangeEvent = { before, after in
            guard let after else { return nil }
            return (before == nil ? .accountConnected : .accountReconnected, BrokerEventData(account: after))
        }
        let run = UUID().uuidString.prefix(8)
        let deadline = ContinuousClock.now + .seconds(seconds)
        let started = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for writer in 0..<concurrency {
                group.addTask {
                    var mine: [Double] = []
                    var n = 0
                    while ContinuousClock.now < deadline {
                        let now = Date()
                        let account = Account(
                            provider: "weibo", uid: "\(run)-\(writer)-\(n)", accessToken: Secret("bench-token-\(n)"),
                            tokenType: "bearer", scope: nil, createdAt: now, updatedAt: now)
                        let t0 = ContinuousClock.now
                        if separate {
                            _ = try await accounts.updateThenRecord(id: account.id, reporting: event, to: sink) { _ in account }
                        } else {
                            _ = try await accounts.update(id: account.id, reporting: event, to: sink) { _ in account }
                        }
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
                format: "changes=%d seconds=%.1f per_second=%.0f p50_ms=%.2f p99_ms=%.2f",
                latencies.count, total, Double(latencies.count) / total, percentile(0.5) * 1000, percentile(0.99) * 1000))
    }
}
