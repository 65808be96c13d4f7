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

    /// One sweep, now: polls each device sign-in that is due; returns how many were polled (pending or ended).
    @discardableResult
    public func runOnce() async -> Int {
        guard let flows = try? await service.flows.deviceFlows(now: service.now()) else { return 0 }
        var polled = 0
        for flow in flows where flow.device?.isDue(at: service.now()) ?? false {
            if await service.pollDevice(state: flow.state, lock: lock, lockTTL: lockTTL) != .skipped { polled += 1 }
        }
        return polled
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
