import BrokerCore
import Dispatch
import Foundation
import Glibc
import Synchronization

/// Hands batches of work from one producer to threads of their own, and adds threads when the work waits on the disk.
///
/// Start-up reads one small file per account. With the files in the page
/// cache that is CPU work, and one thread per core does it best: more threads
/// only contend. After a reboot the same reads wait on the disk one at a time,
/// and then many reads in flight are what helps: on this project's virtio
/// disks, start-up with 100,000 records after dropping the page cache took
/// 8.2–10.2 s with two threads and 3.3–3.9 s with up to 64 (16: 4.3–4.8 s;
/// 192: no better), while the warm start went from 0.81–0.87 s to 0.74–0.79 s.
///
/// So the lanes start at ``initial`` threads, and the first batch whose reads
/// went to the disk for more than a quarter of its files (the thread's block
/// input count, `getrusage(RUSAGE_THREAD)`) widens them to ``maximum``. Wall
/// time against CPU time is no test: beside other work a lane also waits for a
/// core. Each lane is
/// a serial queue: those overcommit, so each gets a thread, where Dispatch's
/// global queue runs about one block per core and does not notice that its
/// threads wait.
final class LoadLanes: Sendable {
    private struct State {
        var batches: [[String]] = []
        var next = 0
        var lanes = 0
        var widened = false
    }

    /// Threads at start: one per core.
    let initial: Int
    /// Threads once the work is found waiting on I/O.
    let maximum: Int
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let group = DispatchGroup()
    private let work: @Sendable ([String]) -> Void

    /// Lanes that run `work` on each batch added; call ``finish()`` once every batch is added.
    init(initial: Int = ProcessInfo.processInfo.activeProcessorCount, maximum: Int = 64, work: @escaping @Sendable ([String]) -> Void) {
        self.initial = max(1, min(initial, maximum))
        self.maximum = max(1, maximum)
        self.work = work
        for _ in 0..<self.initial { startLane() }
    }

    /// Queues `batch` for the next free lane.
    func add(_ batch: [String]) {
        state.withLock { $0.batches.append(batch) }
        available.signal()
    }

    /// Waits until every batch added has been worked on; no batch may be added after.
    func finish() {
        // One wake-up per lane that may ever run: each finds nothing left and ends.
        for _ in 0..<maximum { available.signal() }
        group.wait()
    }

    /// How many lanes were started (for tests).
    var laneCount: Int { state.withLock { $0.lanes } }

    private func startLane() {
        let number = state.withLock { state -> Int in
            state.lanes += 1
            return state.lanes
        }
        DispatchQueue(label: "token-broker.load.\(number)", qos: .userInitiated).async(group: group) { self.run() }
    }

    private func run() {
        while true {
            available.wait()
            let batch = state.withLock { state -> [String]? in
                guard state.next < state.batches.count else { return nil }
                defer { state.next += 1 }
                return state.batches[state.next]
            }
            guard let batch else { return }
            let before = Self.blockInputs()
            work(batch)
            if (Self.blockInputs() - before) * 4 > batch.count { widen() }
        }
    }

    /// Starts the remaining lanes, once.
    private func widen() {
        let more = state.withLock { state -> Int in
            guard !state.widened else { return 0 }
            state.widened = true
            return maximum - state.lanes
        }
        for _ in 0..<more { startLane() }
    }

    /// How many times the file system read from the disk for this thread so far.
    private static func blockInputs() -> Int {
        var usage = rusage()
        // RUSAGE_THREAD (Linux; not in the Glibc module map).
        guard getrusage(__rusage_who_t(1), &usage) == 0 else { return 0 }
        return usage.ru_inblock
    }
}
