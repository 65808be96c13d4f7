import Foundation
import Synchronization

/// Something that happens in another task (a handler entered, a request in flight), counted, that a test waits for
/// instead of sleeping and hoping it happened.
public final class TestEvent: Sendable {
    private struct Waiter {
        let id: Int
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var count = 0
        var nextID = 0
        var waiters: [Waiter] = []
        /// Waiters that gave up before they were registered.
        var abandoned: Set<Int> = []
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

    /// Waits until it happened `count` times; false when `timeout` seconds pass first (a bound on a failing test).
    public func wait(count: Int = 1, timeout: Double = 60) async -> Bool {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.state.withLock { s -> Bool in
                        if s.count >= count || s.abandoned.remove(id) != nil { return true }
                        s.waiters.append(Waiter(id: id, count: count, continuation: continuation))
                        return false
                    }
                    if now { continuation.resume() }
                }
                return self.count >= count
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
                return false
            }
            let happened = await group.next() ?? false
            if !happened {
                // Give up this waiter only: resume it if it is registered, else make it return at once when it is.
                let stranded = state.withLock { s -> CheckedContinuation<Void, Never>? in
                    if let index = s.waiters.firstIndex(where: { $0.id == id }) { return s.waiters.remove(at: index).continuation }
                    s.abandoned.insert(id)
                    return nil
                }
                stranded?.resume()
            }
            group.cancelAll()
            return happened
        }
    }
}
