import Foundation
import Synchronization

/// Full browser flows (`/authorize` → provider → `/callback`) from many threads, counted per second.
enum FlowBench {
    static func run(brokerPort: Int, providerPort: Int, concurrency: Int, seconds: Double) {
        let done = Atomic<Int>(0)
        let failed = Atomic<Int>(0)
        let deadline = Date().addingTimeInterval(seconds)
        let group = DispatchGroup()
        for _ in 0..<concurrency {
            group.enter()
            Thread {
                let broker = BenchClient(port: brokerPort)
                let provider = BenchClient(port: providerPort)
                while Date() < deadline {
                    if flow(broker, provider) { done.wrappingAdd(1, ordering: .relaxed) } else { failed.wrappingAdd(1, ordering: .relaxed) }
                }
                group.leave()
            }.start()
        }
        let start = Date()
        group.wait()
        let elapsed = Date().timeIntervalSince(start)
        let ok = done.load(ordering: .relaxed)
        // The client's own CPU time, so a run on a shared machine can be judged by CPU per flow too.
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpuMilliseconds =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
        print(
            String(
                format: "flows=%d failed=%d seconds=%.1f flows_per_s=%.0f concurrency=%d client_cpu_ms=%.0f",
                ok, failed.load(ordering: .relaxed), elapsed, Double(ok) / elapsed, concurrency, cpuMilliseconds))
    }

    static func flow(_ broker: BenchClient, _ provider: BenchClient) -> Bool {
        guard let start = broker.get("/authorize?provider=weibo"), start.status == 302,
            let location = start.header("Location"), let url = URLComponents(string: location),
            let cookie = start.headers("Set-Cookie").first(where: { $0.hasPrefix("tb_flow=") })?.split(separator: ";").first
        else { return false }
        guard let approved = provider.get(url.path + "?" + (url.percentEncodedQuery ?? "")), approved.status == 302,
            let back = approved.header("Location"), let callback = URLComponents(string: back)
        else { return false }
        let target = callback.path + "?" + (callback.percentEncodedQuery ?? "")
        guard let done = broker.get(target, headers: [("Cookie", String(cookie)), ("Accept", "application/json")]) else { return false }
        return done.status == 200
    }
}
