import Synchronization

/// Lets one task sleep until another signals it, a timeout passes, or it is cancelled.
///
/// A signal that arrives while nobody waits is kept, so the next wait returns
/// at once: a wake-up between the waiter's last look and its wait is not lost.
final class WakeSignal: Sendable {
    private struct State {
        /// A signal came while nobody waited.
        var pending = false
        /// The waiting task, if any.
        var waiter: CheckedContinuation<Void, Never>?
        /// Which wait the waiter is, so an old timer cannot end a later wait.
        var generation: UInt64 = 0
        /// The timeout of the current wait, cancelled when the wait ends otherwise.
        var timer: Task<Void, Never>?
    }

    private let state = Mutex(State())

    /// Creates a signal with nothing pending.
    init() {}

    /// Wakes the waiter, or the next wait when nobody waits now.
    func signal() {
        let (waiter, timer) = state.withLock { s -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
            guard let waiter = s.waiter else {
                s.pending = true
                return (nil, nil)
            }
            s.waiter = nil
            defer { s.timer = nil }
            return (waiter, s.timer)
        }
        timer?.cancel()
        waiter?.resume()
    }

    /// Returns at the next signal (at once when one is pending), after `timeout` seconds, or when the task is cancelled.
    ///
    /// One task waits at a time.
    func wait(timeout: Double) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let generation = state.withLock { s -> UInt64? in
                    if s.pending || Task.isCancelled {
                        s.pending = false
                        return nil
                    }
                    s.generation &+= 1
                    s.waiter = continuation
                    return s.generation
                }
                guard let generation else {
                    continuation.resume()
                    return
                }
                let timer = Task {
                    // A cancelled sleep means the wait already ended.
                    guard (try? await Task.sleep(for: .seconds(timeout))) != nil else { return }
                    self.end(generation: generation)
                }
                state.withLock { s in
                    if s.generation == generation && s.waiter != nil { s.timer = timer } else { timer.cancel() }
                }
            }
        } onCancel: {
            end(generation: nil)
        }
    }

    /// Resumes the waiter when it is still wait `generation` (any wait when nil).
    private func end(generation: UInt64?) {
        let (waiter, timer) = state.withLock { s -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
            guard let waiter = s.waiter, generation == nil || generation == s.generation else { return (nil, nil) }
            s.waiter = nil
            defer { s.timer = nil }
            return (waiter, s.timer)
        }
        timer?.cancel()
        waiter?.resume()
    }
}
