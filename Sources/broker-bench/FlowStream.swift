import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Whole browser flows (`/authorize` → provider → `/callback`) at a target rate until a stop file exists, each
/// acknowledged account's id appended to a file as soon as the callback answers 200: the sign-in load of
/// scripts/postgres-failover, which flows.py's `stream` (Python, a thread per flow) could offer only ~50/s of.
///
/// Open loop within the concurrency: a shared pacer hands out start times `1/rate` apart, so a broker that answers
/// 503 at once during a failover is not hammered faster than the rate; a start time the workers fell behind is not
/// made up later (the offered rate is at most `rate`, and at most what `concurrency` clients achieve).
enum FlowStream {
    struct Options {
        var brokerPort: Int
        var providerPort: Int
        var ackedPath: String
        var stopPath: String
        /// Flows started per second by this process, across its workers; 0 for as fast as the workers go.
        var rate: Double
        var concurrency: Int
    }

    /// What the workers saw: answers by step and status (the keys flows.py's `stream` prints), and the first and
    /// last failure's wall-clock time (seconds since 1970), so the script can bound the error window.
    private struct Tally {
        var ok = 0
        var failed = 0
        var answers: [String: Int] = [:]
        var firstError: Double?
        var lastError: Double?
    }

    static func run(_ options: Options) {
        let fd = open(options.ackedPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            FileHandle.standardError.write(Data("broker-bench: cannot open \(options.ackedPath)\n".utf8))
            exit(2)
        }
        let tally = Mutex(Tally())
        let pacer = Pacer(rate: options.rate)
        let started = Date()
        let group = DispatchGroup()
        for _ in 0..<options.concurrency {
            group.enter()
            Thread {
                let broker = BenchClient(port: options.brokerPort)
                let provider = BenchClient(port: options.providerPort)
                while access(options.stopPath, F_OK) != 0 {
                    pacer.wait()
                    let (answer, account) = flow(broker, provider)
                    if let account {
                        // One write(2) per id on an O_APPEND descriptor: a reader counting lines never sees half of one.
                        let line = Array((account + "\n").utf8)
                        tally.withLock { tally in
                            _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                            tally.ok += 1
                            tally.answers[answer, default: 0] += 1
                        }
                    } else {
                        let now = Date().timeIntervalSince1970
                        tally.withLock { tally in
                            tally.failed += 1
                            tally.answers[answer, default: 0] += 1
                            if tally.firstError == nil { tally.firstError = now }
                            tally.lastError = now
                        }
                        // A refused connection fails at once: pace the retries even when running unpaced.
                        if options.rate == 0 { Thread.sleep(forTimeInterval: 0.02) }
                    }
                }
                group.leave()
            }.start()
        }
        group.wait()
        close(fd)
        let elapsed = Date().timeIntervalSince(started)
        let result = tally.withLock { $0 }
        var json: [String: Any] = [
            "ok": result.ok, "failed": result.failed, "answers": result.answers,
            "seconds": (elapsed * 10).rounded() / 10, "rate": options.rate, "concurrency": options.concurrency,
        ]
        if let first = result.firstError, let last = result.lastError {
            json["first_error"] = first
            json["last_error"] = last
        }
        let data = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])) ?? Data("{}".utf8)
        print(String(decoding: data, as: UTF8.self))
    }

    /// One whole sign-in: the answer's key ("callback answered 200", "authorize answered 503", "provider: no answer",
    /// …) and, when the callback answered 200, the account id from its JSON body.
    static func flow(_ broker: BenchClient, _ provider: BenchClient) -> (String, String?) {
        guard let start = broker.get("/authorize?provider=weibo") else { return ("authorize: no answer", nil) }
        guard start.status == 302 else { return ("authorize answered \(start.status)", nil) }
        guard let location = start.header("Location"), let url = URLComponents(string: location),
            let cookie = start.headers("Set-Cookie").first(where: { $0.hasPrefix("tb_flow=") })?.split(separator: ";").first
        else { return ("authorize: no redirect or flow cookie", nil) }
        guard let approved = provider.get(url.path + "?" + (url.percentEncodedQuery ?? "")) else {
            return ("provider: no answer", nil)
        }
        guard approved.status == 302, let back = approved.header("Location"), let callback = URLComponents(string: back) else {
            return ("provider answered \(approved.status)", nil)
        }
        let target = callback.path + "?" + (callback.percentEncodedQuery ?? "")
        guard let done = broker.get(target, headers: [("Cookie", String(cookie)), ("Accept", "application/json")]) else {
            return ("callback: no answer", nil)
        }
        guard done.status == 200 else { return ("callback answered \(done.status)", nil) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(done.body)) as? [String: Any],
            let id = object["id"] as? String, !id.isEmpty
        else { return ("callback answered 200 without an account id", nil) }
        return ("callback answered 200", id)
    }
}

/// Start times `1/rate` apart shared by threads: each call sleeps until its own. Start times the threads fell behind
/// by up to 100 ms are taken at once; beyond that they are not made up (0: no pacing).
final class Pacer: Sendable {
    private let interval: Duration
    private let next = Mutex(ContinuousClock.now)

    /// How far behind its schedule the pacer catches up.
    private static let slack: Duration = .milliseconds(100)

    init(rate: Double) { interval = rate > 0 ? .nanoseconds(Int64(1e9 / rate)) : .zero }

    func wait() {
        guard interval > .zero else { return }
        let slot = next.withLock { (next: inout ContinuousClock.Instant) -> ContinuousClock.Instant in
            // The schedule is kept: a slot missed by less than `slack` is taken at once, as a population of clients
            // does not wait for each other's late answers (taking `now` instead lost every late slot, so less than the
            // rate was offered on a busy machine); past that the schedule restarts from now, so a stall (a failover)
            // is not followed by a burst of everything it held back.
            let now = ContinuousClock.now
            let slot = next < now - Self.slack ? now : next
            next = slot + interval
            return slot
        }
        let wait = ContinuousClock.now.duration(to: slot)
        if wait > .zero {
            Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
        }
    }
}
