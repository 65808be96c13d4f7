import BrokerApp
import BrokerCore
import BrokerFileStore
import BrokerHTTP
import Foundation
import Synchronization

/// How fast a webhook backlog drains to a healthy local receiver, and what a listing page costs, at a given backlog.
enum OutboxDrainBench {
    /// For each of `counts`: seeds that many pending deliveries into a fresh journal under `root`, times a first and a
    /// later listing page of 100, then runs the dispatcher against a receiver on 127.0.0.1 answering 204 for
    /// `seconds` (or until the backlog is empty). Prints one line per count.
    static func run(root: String, counts: [Int], seconds: Double) async throws {
        let received = Atomic<Int>(0)
        var router = Router()
        router.add(
            .POST, "/hooks",
            .async({ _ in
                received.add(1, ordering: .relaxed)
                return Response(status: .noContent)
            }))
        let receiver = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), router: router)
        try receiver.start()
        let url = "http://127.0.0.1:\(receiver.port)/hooks"
        for count in counts {
            let directory = root + "/drain-\(count)"
            let outbox = try JournalWebhookOutbox(directory: directory)
            let at = Date()
            var batch: [WebhookDelivery] = []
            for n in 0..<count {
                let event = "evt_" + String(format: "%032x", n + 1)
                batch.append(
                    WebhookDelivery(
                        id: event + ".0", eventID: event, eventType: "account.connected", accountID: "bench:\(n)", url: url,
                        body: "{\"id\":\"\(event)\",\"type\":\"account.connected\",\"data\":{\"account_id\":\"bench:\(n)\"}}",
                        enqueuedAt: at.addingTimeInterval(Double(n) / 1_000_000)))
                if batch.count == 1000 || n == count - 1 {
                    try await outbox.append(batch)
                    batch = []
                }
            }
            let firstStart = ContinuousClock.now
            let first = try await outbox.list(limit: 100)
            let firstTime = firstStart.duration(to: .now)
            var cursor = first.next
            for _ in 0..<(count / 200) { cursor = try await outbox.list(limit: 100, cursor: cursor).next }
            let laterStart = ContinuousClock.now
            _ = try await outbox.list(limit: 100, cursor: cursor)
            let laterTime = laterStart.duration(to: .now)

            let delivered = Atomic<Int>(0)
            let dispatcher = WebhookDispatcher(
                outbox: outbox,
                upstream: EpollUpstreamClient(timeout: 10, maxResponseBytes: 64 << 10, truncatesLongAnswers: true),
                settings: WebhookDispatcher.Settings(
                    secret: Array("bench-secret-0123456789abcdef0123".utf8), urls: [url], policy: WebhookRetryPolicy(),
                    attemptTimeout: 10),
                onReport: { report in if report.result == .delivered { delivered.add(1, ordering: .relaxed) } })
            let started = ContinuousClock.now
            dispatcher.start()
            var elapsed = 0.0
            while elapsed < seconds && delivered.load(ordering: .relaxed) < count {
                try await Task.sleep(for: .milliseconds(50))
                elapsed = inSeconds(started.duration(to: .now))
            }
            await dispatcher.stop()
            let done = delivered.load(ordering: .relaxed)
            print(
                String(
                    format: "pending=%d list_first_page_ms=%.2f list_later_page_ms=%.2f delivered=%d seconds=%.1f per_second=%.0f",
                    count, inSeconds(firstTime) * 1000, inSeconds(laterTime) * 1000, done, elapsed, Double(done) / elapsed))
        }
        await receiver.shutdown(grace: 0)
    }

    /// A duration in seconds.
    private static func inSeconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
