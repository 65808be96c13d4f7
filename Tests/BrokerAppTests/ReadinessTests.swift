import Synchronization
import Testing

@testable import BrokerApp

/// Readiness answers every probe, and reports each change of answer once.
struct ReadinessTests {
    @Test func eachChangeOfAnswerIsReportedOnce() async {
        let storage = Mutex<String?>(nil)
        let heard = Mutex<[String?]>([])
        let readiness = Readiness(storageCheck: { storage.withLock { $0 } }, onChange: { answer in heard.withLock { $0.append(answer) } })
        for _ in 0..<3 { #expect(await readiness.check() == nil) }
        storage.withLock { $0 = "disk_full" }
        for _ in 0..<3 { #expect(await readiness.check() == "disk_full") }
        storage.withLock { $0 = "read_only" }
        #expect(await readiness.check() == "read_only")
        storage.withLock { $0 = nil }
        #expect(await readiness.check() == nil)
        readiness.beginShutdown()
        for _ in 0..<2 { #expect(await readiness.check() == "shutting_down") }
        #expect(heard.withLock { $0 } == [nil, "disk_full", "read_only", nil, "shutting_down"])
    }
}
