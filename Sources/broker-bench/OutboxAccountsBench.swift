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
        // The back end joins its accounts to its outbox, so each change and its event are written in one step.
        let backend: any StorageBackend
        if target.hasPrefix("redis://") {
            let client = RedisClient(url: try RedisURL(parsing: target), poolSize: 8)
            backend = RedisStorageBackend(client: client, webhooks: true)
        } else {
            backend = try FileStorageBackend(directory: target, webhooks: true)
        }
        let accounts = backend.accounts
        guard let outbox = backend.outbox else { preconditionFailure("a back end opened with webhooks has an outbox") }
        let sink = OutboxEventSink(outbox: outbox, urls: ["http://127.0.0.1:9/hooks"], now: { Date() })
        let event: AccountChangeEvent = { before, after in
            guard let after else { return nil }
            return (before == nil ? .accountConnected : .accountReconnected, BrokerEventData(account: after))
        }
        let run = UUID().uuidString.prefix(8)
        let result = try await TimedWriters.run(concurrency: concurrency, seconds: seconds) { writer, n in
            let now = Date()
            let account = Account(
                provider: "weibo", uid: "\(run)-\(writer)-\(n)", accessToken: Secret("bench-token-\(n)"),
                tokenType: "bearer", scope: nil, createdAt: now, updatedAt: now)
            if separate {
                _ = try await accounts.updateThenRecord(id: account.accountID, reporting: event, to: sink) { _ in account }
            } else {
                _ = try await accounts.update(id: account.accountID, reporting: event, to: sink) { _ in account }
            }
        }
        print(
            String(
                format: "changes=%d seconds=%.1f per_second=%.0f p50_ms=%.2f p99_ms=%.2f",
                result.latencies.count, result.seconds, result.perSecond, result.percentile(0.5) * 1000,
                result.percentile(0.99) * 1000))
    }
}
