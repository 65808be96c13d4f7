import Foundation

/// Serializes `Process.run()` across the test process.
///
/// Prefer ``ChildProcess``: the lock does not cure the crash, which also comes from
/// `Process.run()` reading `/proc/self/fd` past a buffer; brokers and redis-servers are started with it.
///
/// Foundation's Linux `Process.run()` is not safe to call from several threads at
/// once (it crashed in a `memcpy` inside `run()` while the suite launched brokers, redis-servers and
/// CLI runs in parallel), so every test that starts a child goes through this one lock.
public enum ProcessLaunch {
    private static let lock = NSLock()

    /// Starts `process` while no other test is starting one.
    public static func run(_ process: Process) throws {
        lock.lock()
        defer { lock.unlock() }
        try process.run()
    }
}
