import BrokerTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import BrokerHTTP

/// The worker as an event loop on its own thread: the order of work handed to it, its timers, task jobs resumed on it,
/// fairness between queued work, timers and sockets, and a close that leaves no thread or descriptor behind.
@Suite struct HTTPWorkerTests {
    /// `EPOLLIN` (epoll(7)); the tests do not import CEpoll.
    static let epollIn: UInt32 = 0x001

    /// Runs `body` with an open worker whose thread is named after `index`, and closes it.
    static func withWorker<T>(index: Int = 0, _ body: (HTTPWorker) async throws -> T) async throws -> T {
        let worker = HTTPWorker(index: index)
        try worker.open()
        defer { worker.close() }
        return try await body(worker)
    }

    @Test func workFromManyThreadsRunsOnTheWorkerInTheOrderItWasHandedOver() async throws {
        try await Self.withWorker { worker in
            // Each submitter takes a ticket and hands its block over under one lock, so the tickets' order is the
            // order the worker was given the blocks in: it must run them in that order, on its own thread.
            let tickets = Mutex(0)
            let ran = Mutex<[Int]>([])
            let offWorker = Atomic<Int>(0)
            let done = TestEvent()
            let perThread = 500, threads = 8
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                for _ in 0..<perThread {
                    tickets.withLock { next in
                        let ticket = next
                        next += 1
                        worker.execute {
                            if !worker.isCurrent { offWorker.add(1, ordering: .relaxed) }
                            ran.withLock { $0.append(ticket) }
                            if ticket == threads * perThread - 1 { done.signal() }
                        }
                    }
                }
            }
            #expect(await done.wait())
            let order = ran.withLock { $0 }
            #expect(order == Array(0..<threads * perThread))
            let ranElsewhere = offWorker.load(ordering: .relaxed)
            #expect(ranElsewhere == 0)
        }
    }

    @Test func workHandedOverFromTheWorkerItselfRunsAfterWhatWasQueuedBefore() async throws {
        try await Self.withWorker { worker in
            let ran = Mutex<[String]>([])
            let done = TestEvent()
            // Both handed over from one block on the worker, so both are queued before the first runs.
            worker.execute {
                worker.execute {
                    worker.execute {
                        ran.withLock { $0.append("inner") }
                        done.signal()
                    }
                    ran.withLock { $0.append("outer") }
                }
                worker.execute { ran.withLock { $0.append("second") } }
            }
            #expect(await done.wait())
            #expect(ran.withLock { $0 } == ["outer", "second", "inner"])
        }
    }

    @Test func timersFireInDeadlineOrderAndRescheduledOrCancelledFiringsDoNot() async throws {
        try await Self.withWorker { worker in
            let fired = Mutex<[String]>([])
            let last = TestEvent()
            let ms: UInt64 = 1_000_000
            worker.execute {
                func timer(_ name: String) -> WorkerTimer {
                    worker.makeTimer {
                        #expect(worker.isCurrent)
                        fired.withLock { $0.append(name) }
                        if name == "last" { last.signal() }
                    }
                }
                let a = timer("a"), b = timer("b"), c = timer("c"), moved = timer("moved"), cancelled = timer("cancelled")
                let end = timer("last")
                // Deadlines count from each call: the calls come in an order where a pause of the test between
                // them (a loaded machine) cannot change the expected order, unless it lasts 260 ms.
                a.schedule(after: 300 * ms)
                cancelled.schedule(after: 5 * ms)
                moved.schedule(after: 10 * ms)
                b.schedule(after: 20 * ms)
                c.schedule(after: 40 * ms)
                // Cancelled: never fires, not even when scheduled again.
                cancelled.cancel()
                cancelled.schedule(after: 30 * ms)
                // Due at 10 ms, moved to 400: fires once, after a.
                moved.schedule(after: 400 * ms)
                end.schedule(after: 500 * ms)
            }
            #expect(await last.wait())
            #expect(fired.withLock { $0 } == ["b", "c", "a", "moved", "last"])
        }
    }

    @Test func aTimerScheduledOrCancelledOffTheWorkerTakesEffectOnIt() async throws {
        try await Self.withWorker { worker in
            let fired = Mutex<[String]>([])
            let done = TestEvent()
            let kept = worker.makeTimer {
                fired.withLock { $0.append("kept") }
                done.signal()
            }
            let dropped = worker.makeTimer { fired.withLock { $0.append("dropped") } }
            // Both hop to the worker in order; the cancel would have to lag 100 ms behind to come too late.
            dropped.schedule(after: 100_000_000)
            dropped.cancel()
            kept.schedule(after: 300_000_000)
            #expect(await done.wait())
            #expect(fired.withLock { $0 } == ["kept"])
        }
    }

    @Test func aTaskPreferringTheWorkerResumesOnItWhenAnotherThreadWakesIt() async throws {
        try await Self.withWorker(index: 41) { worker in
            let (before, after, thread, value) = await Task(executorPreference: worker) {
                let before = worker.isCurrent
                // Resumed from a Dispatch thread while the worker sleeps in epoll_wait: the job comes from another
                // thread and must wake it through its eventfd.
                let value = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
                    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) {
                        continuation.resume(returning: 42)
                    }
                }
                return (before, worker.isCurrent, Self.threadName(), value)
            }.value
            #expect(before && after)
            #expect(thread == "http-worker-41")
            #expect(value == 42)
        }
    }

    @Test func endlessQueuedWorkStarvesNeitherTimersNorSockets() async throws {
        try await Self.withWorker { worker in
            var pair: [Int32] = [0, 0]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
            let (reading, writing) = (pair[0], pair[1])
            defer {
                Glibc.close(reading)
                Glibc.close(writing)
            }
            let member = Reader(fd: reading)
            let id = HTTPWorker.nextMemberID()
            let timerFired = Atomic<Bool>(false)
            let rounds = Atomic<Int>(0)
            let done = TestEvent()
            let budget = 1_000_000
            // A block that hands itself over again forever, until both the timer and the socket had their turn
            // (or a million rounds pass: starvation).
            @Sendable func spin() {
                let round = rounds.add(1, ordering: .relaxed).newValue
                if (timerFired.load(ordering: .relaxed) && member.served.load(ordering: .relaxed)) || round >= budget {
                    done.signal()
                    return
                }
                worker.execute(spin)
            }
            worker.execute {
                worker.attach(member, id: id)
                #expect(worker.watch(reading, id: id, from: 0, to: Self.epollIn))
                let timer = worker.makeTimer { timerFired.store(true, ordering: .relaxed) }
                timer.schedule(after: 5_000_000)
                spin()
            }
            #expect(write(writing, "x", 1) == 1)
            #expect(await done.wait())
            let (timerHadItsTurn, socketHadItsTurn) = (timerFired.load(ordering: .relaxed), member.served.load(ordering: .relaxed))
            let spun = rounds.load(ordering: .relaxed)
            #expect(timerHadItsTurn)
            #expect(socketHadItsTurn)
            #expect(spun < budget)
            worker.execute {
                _ = worker.watch(reading, id: id, from: Self.epollIn, to: 0)
                worker.detach(id)
            }
        }
    }

    @Test func closeEndsTheThreadAndLeavesNoDescriptorAndTheWorkerReopens() async throws {
        let name = "http-worker-977"
        let worker = HTTPWorker(index: 977)
        let before = Self.loopDescriptors() - 2 * Self.workerThreads()
        for round in 0..<300 {
            try worker.open()
            #expect(worker.poller >= 0 && worker.wakeFD >= 0)
            if round == 0 {
                let ran = TestEvent()
                worker.execute { if worker.isCurrent && Self.threadName() == name { ran.signal() } }
                #expect(await ran.wait(), "work runs on the worker's own thread")
                #expect(Self.threads(named: name) == 1)
            }
            worker.close()
            // close() returns after the thread ended and closed both descriptors: nothing to wait for.
            #expect(Self.threads(named: name) == 0)
            #expect(worker.poller == -1 && worker.wakeFD == -1)
        }
        // Other suites open and close servers and groups meanwhile, hundreds of workers at once in a full run, so
        // the process's count is compared with what its running workers hold (two each); a leak here would be 600.
        #expect(Self.loopDescriptors() - 2 * Self.workerThreads() < before + 100)

        // Closed, the worker still runs what it is given, in order, as itself; its sockets are refused.
        let ran = Mutex<[Int]>([])
        let done = TestEvent()
        for index in 0..<100 {
            worker.execute {
                #expect(worker.isCurrent)
                ran.withLock { $0.append(index) }
                if index == 99 { done.signal() }
            }
        }
        #expect(await done.wait())
        #expect(ran.withLock { $0 } == Array(0..<100))
        let refused = TestEvent()
        worker.execute { if !worker.watch(0, id: 1, from: 0, to: Self.epollIn) { refused.signal() } }
        #expect(await refused.wait())
    }

    /// The calling thread's name.
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .newlines)
    }

    /// How many of the process's threads are named `name`.
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
            return comm?.trimmingCharacters(in: .newlines) == name
        }.count
    }

    /// The process's epoll and eventfd descriptors.
    /// How many of the process's threads are workers' (named `http-worker-N`).
    static func workerThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
            return comm?.hasPrefix("http-worker-") == true
        }.count
    }

    static func loopDescriptors() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { name in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)
            return target == "anon_inode:[eventpoll]" || target == "anon_inode:[eventfd]"
        }.count
    }
}

/// A socket in the worker's set that reads what comes and notes that it was served.
private final class Reader: EpollMember, Sendable {
    let fd: Int32
    let served = Atomic<Bool>(false)

    init(fd: Int32) { self.fd = fd }

    func ready(_ events: UInt32) {
        var byte: UInt8 = 0
        _ = read(fd, &byte, 1)
        served.store(true, ordering: .relaxed)
    }
}
