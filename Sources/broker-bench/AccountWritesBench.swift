import BrokerCore
import Foundation

/// How long a durable account write takes in the JSON-file repository, one writer alone or many at once.
enum AccountWritesBench {
    /// Writes new sealed accounts (sign-ins) from `concurrency` writers for `seconds` into the store in `directory`,
    /// each acknowledged (durable) before its writer's next, and prints
    /// `writes=N seconds=S per_second=R p50_us=… p99_us=… max_us=…`.
    ///
    /// The store is opened as the broker opens it (``StoreBench/repository(_:openSealedInBackground:)``), so the same
    /// subcommand measures whichever layout the binary was built with.
    static func run(directory: String, seconds: Double, concurrency: Int) async throws {
        let (repo, _) = try StoreBench.repository(directory)
        let run = UUID().uuidString.prefix(8)
        let now = Date()
        let result = try await TimedWriters.run(concurrency: concurrency, seconds: seconds) { writer, n in
            try await repo.put(
                Account(
                    provider: "weibo", uid: "\(run)-\(writer)-\(n)", accessToken: Secret("2.00bench-token-\(writer)-\(n)"),
                    tokenType: "bearer", expiresAt: now.addingTimeInterval(157_679_999), createdAt: now, updatedAt: now))
        }
        print(
            String(
                format: "writes=%d seconds=%.1f per_second=%.0f p50_us=%.0f p99_us=%.0f max_us=%.0f",
                result.latencies.count, result.seconds, result.perSecond, result.percentile(0.5) * 1e6,
                result.percentile(0.99) * 1e6, (result.latencies.last ?? 0) * 1e6))
    }
}
