import Synchronization

/// Whether the broker should receive traffic: not while shutting down, not while
/// its storage cannot take writes. Liveness (`/healthz`) does not depend on it.
///
/// A change of answer (ready to not ready, one reason to another, and back) is reported
/// once through `onChange`, so a probe every few seconds does not log the same thing again.
public final class Readiness: Sendable {
    private let shuttingDown = Atomic<Bool>(false)
    private let storageCheck: @Sendable () async -> String?
    private let degradation: @Sendable () -> String?
    private let onChange: @Sendable (String?) -> Void
    /// The last answer reported: nil until the first check, then `.some(nil)` for ready or `.some(reason)`.
    private let last = Mutex<String??>(nil)

    /// Creates a readiness tracker; `storageCheck` returns nil when storage is writable,
    /// or a short reason when it is not; `degradation` names what serves only in part (nil when nothing);
    /// `onChange` hears each new answer once.
    public init(
        storageCheck: @escaping @Sendable () async -> String?, degradation: @escaping @Sendable () -> String? = { nil },
        onChange: @escaping @Sendable (String?) -> Void = { _ in }
    ) {
        self.storageCheck = storageCheck
        self.degradation = degradation
        self.onChange = onChange
    }

    /// Marks the broker as shutting down; readiness answers 503 from now on.
    public func beginShutdown() { shuttingDown.store(true, ordering: .relaxed) }

    /// What the broker serves only in part while ready (`account_records_damaged`), or nil.
    ///
    /// Not a reason to take it out of traffic: every other account still works, and another replica would not have
    /// the damaged records either. The answer stays 200 and says so; the log and metrics name the records.
    public func degraded() -> String? { degradation() }

    /// Nil when ready, else the reason it is not.
    public func check() async -> String? {
        let answer = shuttingDown.load(ordering: .relaxed) ? "shutting_down" : await storageCheck()
        let changed = last.withLock { last -> Bool in
            if let previous = last, previous == answer { return false }
            last = .some(answer)
            return true
        }
        if changed { onChange(answer) }
        return answer
    }
}
