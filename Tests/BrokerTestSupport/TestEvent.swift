import Foundation
import Synchronization

/// Something that happens in another task (a handler entered, a request in flight), counted, that a test waits for
/// instead of sleeping and hoping it happened.
public final class TestEvent: Sendable {
    private struct State {
        var count = 0
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// How many times it happened so far.
    public var count: Int { state.withLock { $0.count } }

    /// Records one more occurrence and wakes the waiters it satisfies.
    public func signal() {
        let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.count += 1
            let count = s.count
            let ready = s.waiters.filter { $0.count <= count }.map(\.continuation)
            s.waiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// Waits until it happened `count` times; false when `timeout` seconds pass first.
    public func wait(count: Int = 1, timeout: Double = 10) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.state.withLock { s -> Bool in
                        if s.count >= count { return true }
                        s.waiters.append((count, continuation))
                        return false
                    }
                    if now { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
                return false
            }
            let first = await group.next() ?? false
            if !first {
                // Release the waiter so the group can finish.
                let stranded = self.state.withLock { s -> [CheckedContinuation<Void, Never>] in
                    defer { s.waiters.removeAll() }
                    return s.waiters.map(\.continuation)
                }
                for continuation in stranded { continuation.resume() }
            }
            group.cancelAll()
            return first
        }
    }
}
