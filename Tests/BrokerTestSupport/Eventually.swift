/// Polls `condition` every 10 ms until it holds or `timeout` seconds pass; returns its last answer.
///
/// For outcomes another task or process reaches in its own time (a delivery, a
/// restart); ordering within a test uses signals, not this.
public func eventually(timeout: Double = 10, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .seconds(timeout)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}
