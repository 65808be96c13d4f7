import Synchronization

/// Whether the broker should receive traffic: not while shutting down, not while
/// its storage cannot take writes. Liveness (`/healthz`) does not depend on it.
public final class Readiness: Sendable {
    private let shuttingDown = Atomic<Bool>(false)
    private let storageCheck: @Sendable () async -> String?

    /// Creates a readiness tracker; `storageCheck` returns nil when storage is writable,
    /// or a short reason when it is not.
    public init(storageCheck: @escaping @Sendable () async -> String?) {
        self.storageCheck = storageCheck
    }

    /// Marks the broker as shutting down; readiness answers 503 from now on.
    public func beginShutdown() { shuttingDown.store(true, ordering: .relaxed) }

    /// Nil when ready, else the reason it is not.
    public func check() async -> String? {
        if shuttingDown.load(ordering: .relaxed) { return "shutting_down" }
        return await storageCheck()
    }
}
