import Foundation

/// Whether each webhook receiver URL answers, as the dispatcher has seen it: a state machine with no I/O.
///
/// A receiver is up until an attempt to it fails in a way that says nothing
/// answers there (``isUnreachable(_:)``); it is then down, and the dispatcher
/// sends it one delivery at a time (the probe), no sooner than the retry
/// policy's backoff after the last failed probe, while the other receivers
/// keep full concurrency. Any answer that is not such a failure (a 2xx, or a
/// 4xx that refuses one event) brings it back up. Attempts that were in flight
/// when it went down settle without changing its state unless they succeed.
public struct ReceiverHealth: Sendable {
    /// One down receiver.
    public struct Down: Sendable, Equatable {
        /// When it went down.
        public var since: Date
        /// Failed attempts since (the one that took it down included).
        public var failures: Int
        /// When the next probe may start.
        public var nextProbeAt: Date
        /// The delivery out as a probe now, if any.
        public var probe: String?
        /// Why the last attempt failed.
        public var lastError: String
    }

    /// What a settled attempt changed, for the log and metrics.
    public enum Change: Sendable, Equatable {
        /// The receiver went down: the first unreachable failure after it was up, with its cause when the call got no
        /// HTTP answer.
        case wentDown(url: String, error: String, cause: UpstreamCause?)
        /// The receiver answered again after `failures` failed attempts over `seconds`.
        case cameBack(url: String, failures: Int, seconds: Double)
    }

    /// The down receivers by URL; a URL absent is up.
    public private(set) var down: [String: Down] = [:]
    /// Backoff between probes.
    let policy: WebhookRetryPolicy
    /// Seconds a probe may be out before its hold on the others ends (an attempt plus a margin).
    let probeHold: Double

    /// Creates the state with every receiver up.
    public init(policy: WebhookRetryPolicy, attemptTimeout: Double) {
        self.policy = policy
        probeHold = attemptTimeout + 1
    }

    /// Whether `failure` (the dispatcher's reason for a failed attempt) says nothing answers at the URL:
    /// any transport failure or timeout, `429` (the receiver asks to slow down) and any `5xx`.
    ///
    /// A `4xx` other than `429` is an answer about the event, not about the receiver, and keeps it up.
    public static func isUnreachable(_ failure: String) -> Bool {
        guard failure.hasPrefix("HTTP "), let status = Int(failure.dropFirst(5)) else {
            // A URL no longer configured is nobody's fault; anything else failed below HTTP.
            return failure != WebhookDispatcher.unconfiguredURL
        }
        return status == 429 || (500...599).contains(status)
    }

    /// What the next claim holds back: for each down receiver, one lease when a probe is due and none is out, else none.
    ///
    /// Deliveries whose retry window has ended (enqueued before `now − retryFor`) are not held, so they are dropped on time.
    public func holds(now: Date) -> [String: WebhookReceiverHold] {
        var holds: [String: WebhookReceiverHold] = [:]
        let windowEndedBefore = now.addingTimeInterval(-policy.retryFor)
        for (url, state) in down {
            if state.probe == nil && state.nextProbeAt <= now {
                holds[url] = WebhookReceiverHold(leases: 1, until: now.addingTimeInterval(probeHold), windowEndedBefore: windowEndedBefore)
            } else {
                let until = state.probe == nil ? state.nextProbeAt : now.addingTimeInterval(probeHold)
                holds[url] = WebhookReceiverHold(leases: 0, until: until, windowEndedBefore: windowEndedBefore)
            }
        }
        return holds
    }

    /// Notes the deliveries a claim leased: one to a down receiver is its probe.
    public mutating func claimed(_ deliveries: [WebhookDelivery], now: Date) {
        for delivery in deliveries {
            guard var state = down[delivery.url], state.probe == nil, state.nextProbeAt <= now else { continue }
            state.probe = delivery.id
            down[delivery.url] = state
        }
    }

    /// Whether `delivery` may be sent now: its receiver is up, or it is the receiver's probe.
    ///
    /// A delivery leased before its receiver went down (later in a group) is given back instead.
    public func maySend(_ delivery: WebhookDelivery) -> Bool {
        guard let state = down[delivery.url] else { return true }
        return state.probe == delivery.id
    }

    /// Settles an attempt of `delivery`: `failure` nil when it was delivered (`cause` set when the call got no HTTP
    /// answer). Returns what changed, if anything.
    public mutating func settled(
        _ delivery: WebhookDelivery, failure: String?, cause: UpstreamCause? = nil, now: Date, random: () -> Double
    ) -> Change? {
        let unreachable = failure.map(Self.isUnreachable) ?? false
        guard var state = down[delivery.url] else {
            guard unreachable, let failure else { return nil }
            down[delivery.url] = Down(
                since: now, failures: 1, nextProbeAt: nextProbe(after: 1, now: now, random: random), probe: nil, lastError: failure)
            return .wentDown(url: delivery.url, error: failure, cause: cause)
        }
        if !unreachable {
            // Delivered, or refused as an event (4xx), or no longer configured: something answers there.
            guard failure != WebhookDispatcher.unconfiguredURL else { return nil }
            down[delivery.url] = nil
            return .cameBack(url: delivery.url, failures: state.failures, seconds: max(0, now.timeIntervalSince(state.since)))
        }
        // Only the probe's failure moves the next probe; the others were in flight when it went down.
        guard state.probe == delivery.id else { return nil }
        state.failures += 1
        state.probe = nil
        state.lastError = failure ?? state.lastError
        state.nextProbeAt = nextProbe(after: state.failures, now: now, random: random)
        down[delivery.url] = state
        return nil
    }

    /// Forgets a probe that ended unsettled (the dispatcher stopped, or the delivery was given back).
    public mutating func abandoned(_ delivery: WebhookDelivery) {
        guard var state = down[delivery.url], state.probe == delivery.id else { return }
        state.probe = nil
        down[delivery.url] = state
    }

    /// When the next probe may start after `failures` failed attempts: the policy's backoff with its jitter.
    private func nextProbe(after failures: Int, now: Date, random: () -> Double) -> Date {
        let wait = policy.delay(afterAttempts: failures)
        return now.addingTimeInterval(wait / 2 + wait / 2 * min(max(random(), 0), 1))
    }
}
