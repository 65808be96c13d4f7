import Foundation
import Synchronization

/// Renews accounts that expire within the margin even when nobody reads them.
///
/// Each sweep lists the accounts, picks the active ones with a refresh token
/// that are due, and refreshes them one after another through the same
/// single-flight path as reads: a reader of an account being refreshed joins
/// that refresh, and readers of other accounts never wait for the sweep.
/// Accounts whose last attempt failed transiently are skipped until their
/// backoff ends.
public final class BackgroundRefresher: Sendable {
    /// What one sweep did.
    public struct Summary: Sendable, Equatable {
        /// Accounts that were due.
        public var due = 0
        /// Accounts that got a new token (here or from another replica).
        public var refreshed = 0
        /// Due accounts left alone: backing off, or no longer due when their turn came.
        public var skipped = 0
        /// Accounts whose refresh failed, transiently or for good.
        public var failed = 0

        /// Creates a summary.
        public init(due: Int = 0, refreshed: Int = 0, skipped: Int = 0, failed: Int = 0) {
            self.due = due
            self.refreshed = refreshed
            self.skipped = skipped
            self.failed = failed
        }
    }

    /// The service whose accounts and refresher are used.
    let service: AccountService
    /// Seconds between sweeps; 0 means the loop never starts.
    public let interval: Double
    /// Told when a sweep cannot list the accounts (storage down).
    let onSweepFailure: @Sendable (BrokerError) -> Void
    /// The running loop, if started.
    private let loop = Mutex<Task<Void, Never>?>(nil)

    /// Creates a refresher for `service` that sweeps every `interval` seconds once started.
    public init(service: AccountService, interval: Double, onSweepFailure: @escaping @Sendable (BrokerError) -> Void = { _ in }) {
        self.service = service
        self.interval = interval
        self.onSweepFailure = onSweepFailure
    }

    /// One sweep, now: refreshes every due account and says what happened; throws only when the accounts cannot be listed.
    public func runOnce() async throws(BrokerError) -> Summary {
        let all = try await service.list(provider: nil)
        let at = service.now()
        var summary = Summary()
        for account in all where service.refresher.isDue(account, at: at) {
            summary.due += 1
            do {
                switch try await service.refresher.refresh(account, respectingBackoff: true) {
                case .refreshed: summary.refreshed += 1
                case .unchanged, .backingOff: summary.skipped += 1
                case .failed: summary.failed += 1
                }
            } catch {
                summary.failed += 1
            }
        }
        return summary
    }

    /// Starts sweeping every ``interval`` seconds in a task of its own; does nothing when the interval is 0 or it already runs.
    public func start() {
        guard interval > 0 else { return }
        loop.withLock { task in
            guard task == nil else { return }
            task = Task { [self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(interval))
                    if Task.isCancelled { break }
                    do throws(BrokerError) {
                        _ = try await runOnce()
                    } catch {
                        onSweepFailure(error)
                    }
                }
            }
        }
    }

    /// Stops the loop; a refresh already running finishes for the readers that wait on it.
    public func stop() {
        loop.withLock { task in
            task?.cancel()
            task = nil
        }
    }
}
