import Foundation

/// Whether `condition` holds within `timeout` seconds, checking it every `interval`.
///
/// For what another process or a background task brings about in its own time (a
/// reconnect, a background sweep, a file written by a child); where the test itself
/// can be told that something happened, wait for that event instead. The limit is a
/// bound on a failing test, never a speed target: a loaded 2-core machine takes its
/// time, so it is a minute unless a test has reason to wait longer.
public func eventually(
    timeout: Double = 60, interval: Double = 0.02,
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try await condition() { return true }
        if Date() >= deadline { return false }
        try? await Task.sleep(nanoseconds: UInt64(interval * 1e9))
    }
}
