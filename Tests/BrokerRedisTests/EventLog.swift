import Synchronization

/// Events in the order tasks recorded them.
final class EventLog: Sendable {
    private let storage = Mutex<[String]>([])

    /// Records `event` after every event recorded before.
    func append(_ event: String) {
        storage.withLock { $0.append(event) }
    }

    /// Every event so far, in order.
    var entries: [String] {
        storage.withLock { $0 }
    }
}
