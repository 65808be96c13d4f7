import Foundation
import Synchronization

/// Sends the outbox's due deliveries to their receivers, signed, and settles each by what the receiver answered.
///
/// One loop leases due deliveries (up to ``Settings/concurrency`` tasks in
/// flight) and sends them through the outbound client, the deliveries of one
/// account to one URL in a task of their own, one after another in the order
/// recorded, so a slow receiver holds only its own deliveries and an account's
/// events of one batch arrive in order. A 2xx answer completes the delivery;
/// any other answer, a timeout or a transport failure reschedules it by the
/// ``WebhookRetryPolicy``, until the policy gives up and the delivery is
/// dropped. A receiver that does not answer (``ReceiverHealth``) is marked
/// down and sent one delivery at a time, at the policy's backoff, until it
/// answers; its other deliveries wait in the outbox without attempts, and the
/// other receivers keep full concurrency. A delivery whose settling cannot be written (store down) keeps its
/// lease until the lease runs out and is attempted again then: delivery is at
/// least once, never at most once.
///
/// The loop wakes when ``wake()`` is called (an event was just recorded here),
/// when a delivery ends, and every ``Settings/pollInterval`` seconds (retries
/// coming due, events recorded by other replicas).
public final class WebhookDispatcher: Sendable {
    /// How the dispatcher signs, sends and retries.
    public struct Settings: Sendable {
        /// The HMAC key of `Broker-Signature` (`BROKER_WEBHOOK_SECRET`).
        public var secret: [UInt8]
        /// The receivers configured now; a stored delivery to any other URL is dropped.
        public var urls: [String]
        /// Backoff and giving up.
        public var policy: WebhookRetryPolicy
        /// Seconds one attempt may take (`BROKER_WEBHOOK_TIMEOUT`).
        public var attemptTimeout: Double
        /// Seconds a lease lasts: longer than one attempt, so another replica takes over only from one that died.
        public var lease: Double
        /// The most deliveries in flight at once.
        public var concurrency: Int
        /// The longest sleep between looks at the outbox.
        public var pollInterval: Double

        /// Creates settings; the lease and poll interval follow from the attempt timeout and the policy unless given.
        public init(
            secret: [UInt8], urls: [String], policy: WebhookRetryPolicy, attemptTimeout: Double,
            concurrency: Int = 16, pollInterval: Double? = nil
        ) {
            self.secret = secret
            self.urls = urls
            self.policy = policy
            self.attemptTimeout = attemptTimeout
            lease = attemptTimeout + 10
            self.concurrency = max(1, concurrency)
            self.pollInterval = pollInterval ?? min(1, max(0.02, policy.base / 2))
        }
    }

    /// What became of one attempt, for logs and metrics; it holds no body and no secret.
    public struct Report: Sendable, Equatable {
        /// How the attempt was settled.
        public enum Result: Sendable, Equatable {
            /// The receiver answered 2xx; the delivery is complete.
            case delivered
            /// The attempt failed; the next one is due at this time.
            case retrying(Date)
            /// The attempt failed and the policy gave up, or the URL is no longer configured; the delivery is kept as dropped.
            case dropped
        }

        /// The delivery as it was leased (attempts not yet counting this one).
        public var delivery: WebhookDelivery
        /// What came of it.
        public var result: Result
        /// Why the attempt failed (`HTTP 500`, `timeout`, `connection refused`); nil when delivered.
        public var failure: String?
        /// The cause when the attempt got no HTTP answer (`connect_refused`, `tls_certificate` …); nil otherwise.
        public var cause: UpstreamCause?
        /// Seconds from sending to the answer (or failure).
        public var duration: Double
        /// Set when the outcome could not be stored; the lease runs out and the delivery is attempted again.
        public var storeError: StoreError?
        /// Set when the attempt failed because the receiver is down: that is told once, as a ``ReceiverHealth/Change``.
        public var receiverDown = false
    }

    /// Where deliveries come from and are settled.
    let outbox: any WebhookOutbox
    /// The outbound client: no redirects, a deadline per call, a capped answer.
    let upstream: any UpstreamClient
    /// Signing, receivers, retries and concurrency.
    public let settings: Settings
    /// The wall clock: leases, due times and `t` in the signature.
    let now: @Sendable () -> Date
    /// A number in [0, 1) for the backoff's jitter.
    let random: @Sendable () -> Double
    /// Told about every attempt's outcome; must not block.
    let onReport: @Sendable (Report) -> Void
    /// Told when the outbox stops answering claims (with the error) and when it answers again (nil), once each; must not block.
    let onOutboxUnreadable: @Sendable (StoreError?) -> Void
    /// Told when a receiver goes down and when it answers again, once each; must not block.
    let onReceiverChange: @Sendable (ReceiverHealth.Change) -> Void
    /// Which receivers are down.
    private let health: Mutex<ReceiverHealth>

    private let signal = WakeSignal()
    private let loop = Mutex<Task<Void, Never>?>(nil)
    private let inFlight = Mutex<[UInt64: Task<Void, Never>]>([:])
    private let nextTaskID = Atomic<UInt64>(0)

    /// The User-Agent of webhook requests.
    public static let userAgent = "token-broker-webhooks"
    /// The failure of a delivery whose URL is no longer configured.
    public static let unconfiguredURL = "the URL is no longer configured"

    /// Creates a dispatcher; nothing is sent until ``start()``.
    public init(
        outbox: any WebhookOutbox, upstream: any UpstreamClient, settings: Settings,
        now: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        onReport: @escaping @Sendable (Report) -> Void = { _ in },
        onOutboxUnreadable: @escaping @Sendable (StoreError?) -> Void = { _ in },
        onReceiverChange: @escaping @Sendable (ReceiverHealth.Change) -> Void = { _ in }
    ) {
        self.outbox = outbox
        self.upstream = upstream
        self.settings = settings
        self.now = now
        self.random = random
        self.onReport = onReport
        self.onOutboxUnreadable = onOutboxUnreadable
        self.onReceiverChange = onReceiverChange
        health = Mutex(ReceiverHealth(policy: settings.policy, attemptTimeout: settings.attemptTimeout))
    }

    /// Starts the loop in a task of its own; does nothing when it runs already.
    public func start() {
        loop.withLock { task in
            guard task == nil else { return }
            task = Task { [self] in await run() }
        }
    }

    /// Stops the loop and cancels the attempts in flight, and waits for them; their deliveries stay pending.
    public func stop() async {
        let task = loop.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        let running = inFlight.withLock { Array($0.values) }
        for attempt in running { attempt.cancel() }
        for attempt in running { await attempt.value }
    }

    /// Looks at the outbox now rather than at the next poll: an event was just recorded.
    public func wake() {
        signal.signal()
    }

    /// How many attempts are in flight now.
    public var attemptsInFlight: Int {
        inFlight.withLock { $0.count }
    }

    /// The receiver URLs that are down now.
    public var receiversDown: [String] {
        health.withLock { Array($0.down.keys).sorted() }
    }

    /// Leases what is due while there is room, then sleeps until woken or the poll interval passes.
    private func run() async {
        var unreadable = false
        while !Task.isCancelled {
            let room = settings.concurrency - attemptsInFlight
            if room > 0 {
                do throws(StoreError) {
                    let at = now()
                    let holds = health.withLock { $0.holds(now: at) }
                    let leases = try await outbox.claim(limit: room, now: at, lease: settings.lease, holding: holds)
                    health.withLock { $0.claimed(leases.map(\.delivery), now: at) }
                    if unreadable {
                        unreadable = false
                        onOutboxUnreadable(nil)
                    }
                    for group in Self.inOrder(leases) { launch(group) }
                    // A full batch may have left more due behind it.
                    if leases.count == room { continue }
                } catch {
                    if !unreadable && !Task.isCancelled {
                        unreadable = true
                        onOutboxUnreadable(error)
                    }
                }
            }
            await signal.wait(timeout: settings.pollInterval)
        }
    }

    /// Runs one attempt in a task of its own, tracked so ``stop()`` can cancel it.
    private func launch(_ group: [WebhookLease]) {
        let id = nextTaskID.wrappingAdd(1, ordering: .relaxed).oldValue
        inFlight.withLock { table in
            table[id] = Task { [self] in
                await attemptInOrder(group)
                _ = inFlight.withLock { $0.removeValue(forKey: id) }
                signal.signal()
            }
        }
    }

    /// `leases` (earliest due first) in groups of one account and one URL, each in the order recorded; groups in order of their first lease.
    ///
    /// A group is sent one delivery after another, so a receiver gets an
    /// account's events of one batch in the order they happened.
    static func inOrder(_ leases: [WebhookLease]) -> [[WebhookLease]] {
        var groups: [[WebhookLease]] = []
        var index: [String: Int] = [:]
        for lease in leases {
            // A delivery without an account (a failed sign-in) is a group of its own.
            let key = lease.delivery.accountID.map { "\($0)\u{0}\(lease.delivery.url)" } ?? "\u{1}" + lease.delivery.id
            if let at = index[key] {
                groups[at].append(lease)
            } else {
                index[key] = groups.count
                groups.append([lease])
            }
        }
        return groups.map { $0.sorted { ($0.delivery.enqueuedAt, $0.delivery.id) < ($1.delivery.enqueuedAt, $1.delivery.id) } }
    }

    /// Sends a group one delivery after another; when one is to be retried, the later ones wait for that retry without an attempt counted.
    ///
    /// The leases were all taken at the start: once another attempt might
    /// outlast them, the rest are given back, due now, for the next claim.
    func attemptInOrder(_ group: [WebhookLease]) async {
        let started = ContinuousClock.now
        var waitUntil: Date?
        for (index, lease) in group.enumerated() {
            if Task.isCancelled {
                health.withLock { state in for rest in group[index...] { state.abandoned(rest.delivery) } }
                return
            }
            let elapsed = started.duration(to: .now)
            let leaseLeft = settings.lease - (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            if waitUntil != nil || (index > 0 && leaseLeft < settings.attemptTimeout + 1) {
                var deferred = lease.delivery
                if let waitUntil { deferred.nextAttemptAt = max(deferred.nextAttemptAt, waitUntil) }
                health.withLock { $0.abandoned(lease.delivery) }
                // Settled by its lease; if that fails the lease runs out and it is due then anyway.
                try? await outbox.reschedule(lease, as: deferred)
                continue
            }
            if !health.withLock({ $0.maySend(lease.delivery) }) {
                await holdBack(lease)
                continue
            }
            if case .retrying(let next) = await attempt(lease) { waitUntil = next }
        }
    }

    /// Settles a delivery to a down receiver without sending it: given back as it was (the next claims set it
    /// aside until the receiver answers), or dropped when its retry window has ended.
    func holdBack(_ lease: WebhookLease) async {
        let at = now()
        guard lease.delivery.enqueuedAt.addingTimeInterval(settings.policy.retryFor) <= at else {
            // Settled by its lease; if that fails the lease runs out and it is due then anyway.
            try? await outbox.reschedule(lease, as: lease.delivery)
            return
        }
        var dropped = lease.delivery
        // Why its receiver is down: the failure its last attempts would have met.
        dropped.lastError = health.withLock { $0.down[dropped.url]?.lastError } ?? dropped.lastError
        dropped.droppedAt = at
        var report = Report(delivery: lease.delivery, result: .dropped, failure: dropped.lastError, duration: 0)
        report.receiverDown = true
        do throws(StoreError) {
            try await outbox.drop(lease, as: dropped)
        } catch {
            report.storeError = error
        }
        onReport(report)
    }

    /// Sends one delivery and settles it; a cancelled attempt (shutdown) is left to its lease. Returns how it was settled.
    @discardableResult
    func attempt(_ lease: WebhookLease) async -> Report.Result? {
        let delivery = lease.delivery
        let started = ContinuousClock.now
        let failure: String?
        var cause: UpstreamCause?
        if settings.urls.contains(delivery.url) {
            (failure, cause) = await send(delivery)
        } else {
            failure = Self.unconfiguredURL
        }
        if Task.isCancelled {
            health.withLock { $0.abandoned(delivery) }
            return nil
        }
        let change = health.withLock { $0.settled(delivery, failure: failure, cause: cause, now: now(), random: random) }
        if let change { onReceiverChange(change) }
        let elapsed = started.duration(to: .now)
        let duration = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var report = Report(delivery: delivery, result: .delivered, failure: failure, duration: duration)
        report.cause = cause
        report.receiverDown = failure.map(ReceiverHealth.isUnreachable) == true && health.withLock { $0.down[delivery.url] != nil }
        do throws(StoreError) {
            guard let failure else {
                try await outbox.complete(lease)
                onReport(report)
                return .delivered
            }
            var updated = delivery
            updated.attempts += 1
            updated.lastError = failure
            let at = now()
            let next =
                settings.urls.contains(delivery.url)
                ? settings.policy.nextAttempt(after: delivery, attempts: updated.attempts, now: at, random: random) : nil
            if let next {
                updated.nextAttemptAt = next
                report.result = .retrying(next)
                try await outbox.reschedule(lease, as: updated)
            } else {
                updated.droppedAt = at
                report.result = .dropped
                try await outbox.drop(lease, as: updated)
            }
        } catch {
            report.storeError = error
        }
        onReport(report)
        return report.result
    }

    /// POSTs the delivery's body with its signature; no failure when the receiver answered 2xx, else why not,
    /// with the cause when the call got no HTTP answer.
    func send(_ delivery: WebhookDelivery) async -> (failure: String?, cause: UpstreamCause?) {
        let body = Array(delivery.body.utf8)
        let timestamp = Int(now().timeIntervalSince1970.rounded(.down))
        let request = UpstreamRequest(
            method: "POST", url: delivery.url,
            headers: [
                ("Content-Type", "application/json"),
                ("User-Agent", Self.userAgent),
                ("Broker-Event-Id", delivery.eventID),
                ("Broker-Event-Type", delivery.eventType),
                (WebhookSignature.headerName, WebhookSignature.header(secret: settings.secret, timestamp: timestamp, body: body)),
            ], body: body)
        do {
            let response = try await upstream.send(request)
            return ((200..<300).contains(response.status) ? nil : "HTTP \(response.status)", nil)
        } catch {
            let failure =
                switch error {
                case .timeout: "timeout"
                case .connectTimeout: "connect timeout"
                case .transport(_, let message): message
                // Not from a client that cuts a long answer at its cap and keeps the status (as the broker's does).
                case .tooLarge(let limit): "the answer is larger than \(limit) bytes"
                }
            return (failure, error.cause)
        }
    }
}
