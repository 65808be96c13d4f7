import Foundation
import Synchronization

/// Renews accounts that expire within the margin even when nobody reads them.
///
/// Each sweep lists the accounts and picks the active ones with a refresh
/// token that are due. They are refreshed oldest expiry first, at most
/// ``Herd/concurrency`` at a time per provider, each start delayed by a small
/// random jitter so that thousands of accounts falling due together reach the
/// provider as a steady stream rather than a burst. Every refresh takes the
/// same single-flight path as reads: a reader of an account being refreshed
/// joins that refresh, and a reader of an account still waiting in the queue
/// does not wait for it (the queue is not a refresh in flight). Accounts whose
/// last attempt failed transiently are skipped until their shared backoff
/// ends, and once a provider answers with `Retry-After` no further refresh of
/// that provider starts until then, on any replica sharing the backoff store:
/// the rest of its queue is skipped and left to a later sweep.
public final class BackgroundRefresher: Sendable {
    /// What one sweep did.
    public struct Summary: Sendable, Equatable {
        /// Accounts that were due.
        public var due = 0
        /// Accounts that got a new token (here or from another replica).
        public var refreshed = 0
        /// Due accounts left alone: backing off, their provider pausing, or no longer due when their turn came.
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

        /// Adds `other`'s counts to these.
        mutating func add(_ other: Summary) {
            due += other.due
            refreshed += other.refreshed
            skipped += other.skipped
            failed += other.failed
        }
    }

    /// How a sweep spreads its refreshes over time.
    public struct Herd: Sendable, Equatable {
        /// Refresh calls in flight at once per provider (`BROKER_REFRESH_CONCURRENCY`), at least 1.
        public var concurrency: Int
        /// The longest random delay, in seconds, before each refresh starts; 0 starts each at once.
        public var startJitter: TimeInterval

        /// The default cap.
        public static let defaultConcurrency = 8

        /// Creates settings; a concurrency below 1 counts as 1, a negative or non-finite jitter as 0.
        public init(concurrency: Int = Herd.defaultConcurrency, startJitter: TimeInterval = 0.01) {
            self.concurrency = max(1, concurrency)
            self.startJitter = startJitter.isFinite ? max(0, startJitter) : 0
        }
    }

    /// The service whose accounts and refresher are used.
    let service: AccountService
    /// Seconds between sweeps; 0 means the loop never starts.
    public let interval: Double
    /// The cap and the jitter.
    public let herd: Herd
    /// A random number in 0..<1 for each start's jitter.
    let random: @Sendable () -> Double
    /// Told when a sweep cannot list the accounts (storage down).
    let onSweepFailure: @Sendable (BrokerError) -> Void
    /// The running loop, if started.
    private let loop = Mutex<Task<Void, Never>?>(nil)

    /// Creates a refresher for `service` that sweeps every `interval` seconds once started, spreading refreshes as `herd` says.
    /// `random` gives a number in 0..<1 for each start's jitter.
    public init(
        service: AccountService, interval: Double, herd: Herd = Herd(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        onSweepFailure: @escaping @Sendable (BrokerError) -> Void = { _ in }
    ) {
        self.service = service
        self.interval = interval
        self.herd = herd
        self.random = random
        self.onSweepFailure = onSweepFailure
    }

    /// One sweep, now: refreshes every due account and says what happened; throws only when the accounts cannot be listed.
    public func runOnce() async throws(BrokerError) -> Summary {
        let all = try await service.list(provider: nil)
        let at = service.now()
        let due = all.filter { service.refresher.isDue($0, at: at) }.sorted(by: Self.expiresFirst)
        // One queue per provider, each in expiry order; ExactKey so that two spellings of a name stay two providers.
        var queues: [ExactKey: [Account]] = [:]
        for account in due { queues[ExactKey(account.provider), default: []].append(account) }
        var summary = Summary(due: due.count)
        await withTaskGroup(of: Summary.self) { group in
            for (provider, accounts) in queues {
                let queue = HerdQueue(accounts)
                for _ in 0..<min(herd.concurrency, accounts.count) {
                    group.addTask { await self.drain(queue, provider: provider.string) }
                }
            }
            for await part in group { summary.add(part) }
        }
        return summary
    }

    /// One of a provider's workers: takes the next account from `queue` and refreshes it until the queue is empty.
    private func drain(_ queue: HerdQueue, provider: String) async -> Summary {
        var part = Summary()
        while let account = queue.next() {
            if herd.startJitter > 0 {
                try? await Task.sleep(for: .seconds(herd.startJitter * min(max(random(), 0), 1)))
            }
            if await service.refresher.providerPausedUntil(provider) != nil {
                // The provider asked for a pause: nothing more starts there in this sweep.
                part.skipped += 1 + queue.takeRest()
                break
            }
            do {
                switch try await service.refresher.refresh(account, respectingBackoff: true) {
                case .refreshed: part.refreshed += 1
                case .unchanged, .backingOff: part.skipped += 1
                case .failed: part.failed += 1
                }
            } catch {
                part.failed += 1
            }
        }
        return part
    }

    /// Oldest expiry first, counting whichever lapses first of the access token and the refresh token; accounts
    /// expiring together in id order, so a sweep's order does not depend on the listing's.
    static func expiresFirst(_ a: Account, _ b: Account) -> Bool {
        let x = lapse(of: a), y = lapse(of: b)
        return x != y ? x < y : ExactKey.precedes(a.id, b.id)
    }

    /// When the first of `account`'s tokens lapses; the distant future when neither has an expiry.
    static func lapse(of account: Account) -> Date {
        min(account.expiresAt ?? .distantFuture, account.refreshTokenExpiresAt ?? .distantFuture)
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

/// One provider's due accounts in a sweep, handed out one at a time to that provider's workers.
final class HerdQueue: Sendable {
    /// The accounts and the index of the next one to hand out.
    private let state: Mutex<(accounts: [Account], next: Int)>

    /// A queue of `accounts`, first to last.
    init(_ accounts: [Account]) {
        state = Mutex((accounts, 0))
    }

    /// The next account, or nil when all were handed out.
    func next() -> Account? {
        state.withLock { s in
            guard s.next < s.accounts.count else { return nil }
            defer { s.next += 1 }
            return s.accounts[s.next]
        }
    }

    /// Hands out every account left at once, for a worker that skips them; returns how many there were.
    func takeRest() -> Int {
        state.withLock { s in
            let left = s.accounts.count - s.next
            s.next = s.accounts.count
            return left
        }
    }
}
