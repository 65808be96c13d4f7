import Foundation
import Synchronization

/// Polls every pending device sign-in (RFC 8628 §3.4) when its interval has passed, on every replica.
///
/// Each sweep lists the device flows in the flow store, so flows started on another replica or before a restart
/// are polled too; ``AuthorizationService/pollDevice(state:lock:lockTTL:)`` takes the store's lock per flow and keeps
/// the next poll time in the flow, so one device code is polled once per interval whichever replicas sweep.
/// Time comes from the service's injected clock: a test moves that clock and calls ``runOnce()``.
public final class DeviceFlowPoller: Sendable {
    /// The service whose flows are polled.
    let service: AuthorizationService
    /// The lock shared by every replica of the store.
    let lock: any RefreshLock
    /// How long a poll may hold a flow's lock, in seconds: one provider call and the store round trips around it.
    let lockTTL: Double
    /// Seconds between sweeps; 0 means the loop never starts.
    public let tick: Double
    /// The running loop, if started.
    private let loop = Mutex<Task<Void, Never>?>(nil)

    /// A poller over `service`'s flows that sweeps every `tick` seconds once started.
    public init(service: AuthorizationService, lock: any RefreshLock, lockTTL: Double, tick: Double = 1) {
        self.service = service
        self.lock = lock
        self.lockTTL = lockTTL
        self.tick = tick
    }

    /// Polls in flight at once in one sweep: a provider slow to answer holds up its own flows, not every other.
    public static let concurrency = 8

    /// One sweep, now: polls each device sign-in that is due, at most ``concurrency`` at once; returns how many were
    /// polled (pending or ended).
    @discardableResult
    public func runOnce() async -> Int {
        let at = service.now()
        guard let flows = try? await service.flows.deviceFlows(now: at) else { return 0 }
        let due = flows.filter { $0.device?.isDue(at: at) ?? false }.map(\.state)
        guard !due.isEmpty else { return 0 }
        return await withTaskGroup(of: Bool.self) { group in
            var next = 0
            func startNext() {
                guard next < due.count else { return }
                let state = due[next]
                next += 1
                group.addTask { await self.service.pollDevice(state: state, lock: self.lock, lockTTL: self.lockTTL) != .skipped }
            }
            for _ in 0..<min(Self.concurrency, due.count) { startNext() }
            var polled = 0
            while let didPoll = await group.next() {
                if didPoll { polled += 1 }
                startNext()
            }
            return polled
        }
    }

    /// Starts sweeping every ``tick`` seconds; does nothing when `tick` is 0 or the loop runs.
    public func start() {
        guard tick > 0 else { return }
        loop.withLock { task in
            guard task == nil else { return }
            let tick = self.tick
            task = Task { [self] in
                while !Task.isCancelled {
                    await runOnce()
                    try? await Task.sleep(for: .seconds(tick))
                }
            }
        }
    }

    /// Stops the loop; a sweep in progress ends at its next suspension.
    public func stop() {
        loop.withLock { task in
            task?.cancel()
            task = nil
        }
    }
}
