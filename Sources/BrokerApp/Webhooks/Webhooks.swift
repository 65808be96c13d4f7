import BrokerCore
import Foundation

/// The webhook machinery of one broker: the outbox in its store, the sink the services record events into,
/// the dispatcher that delivers them, and their metrics.
final class Webhooks: Sendable {
    /// Where deliveries wait: the storage back end's outbox.
    let outbox: any WebhookOutbox
    /// What the services record events into.
    let sink: any EventSink
    /// Sends due deliveries.
    let dispatcher: WebhookDispatcher
    /// Attempts by type and outcome.
    let metrics: WebhookMetrics
    /// The wall clock, for the age of the oldest pending delivery.
    let wallClock: @Sendable () -> Date

    /// Builds the machinery for `settings` around `outbox`, the storage back end's; `now` is the services' clock,
    /// used for `created_at`; `clients` makes the one that carries deliveries (with `caFile` for `https://`),
    /// each failure counted in `errors`.
    init(
        settings: WebhookSettings, outbox: any WebhookOutbox, logger: BrokerLogger,
        now: @escaping @Sendable () -> Date, wallClock: @escaping @Sendable () -> Date = { Date() },
        clients: UpstreamClientFactory = .native, caFile: String? = nil, errors: UpstreamErrorMetrics = UpstreamErrorMetrics()
    ) {
        self.outbox = outbox
        let metrics = WebhookMetrics()
        self.metrics = metrics
        self.wallClock = wallClock
        // A receiver's answer is read up to the cap and judged by its status: a long 2xx body is still a delivery.
        let client = MeteredUpstreamClient(
            inner: clients.make(
                timeout: settings.timeout, maxResponseBytes: WebhookSettings.maxResponseBytes, truncatesLongAnswers: true,
                caFile: caFile),
            errors: errors, target: .webhook, logger: nil)
        let dispatcher = WebhookDispatcher(
            outbox: outbox, upstream: client,
            settings: WebhookDispatcher.Settings(
                secret: Array(settings.secret.value.utf8), urls: settings.urls,
                policy: settings.retry, attemptTimeout: settings.timeout),
            now: wallClock,
            onReport: { report in
                metrics.record(report)
                Self.log(report, to: logger)
            },
            onOutboxUnreadable: { error in
                if let error {
                    logger.log(.warning, "webhook outbox cannot be read; delivery waits", [("error", .string(error.message))])
                } else {
                    logger.log(.info, "webhook outbox readable again; delivery resumes")
                }
            },
            onReceiverChange: { change in
                metrics.record(change)
                Self.log(change, to: logger)
            })
        self.dispatcher = dispatcher
        sink = LoggedEventSink(
            inner: OutboxEventSink(
                outbox: outbox, urls: settings.urls, types: settings.events,
                now: now, wallClock: wallClock, onAppend: { dispatcher.wake() }),
            logger: logger)
    }

    /// The `/metrics` text: attempt counters, and the outbox's depth when the store answers.
    func renderMetrics() async -> String {
        metrics.render(stats: try? await outbox.stats(), receiversDown: dispatcher.receiversDown.count, now: wallClock())
    }

    /// One line when a receiver goes down (warning) and one when it answers again (info); never one per attempt.
    static func log(_ change: ReceiverHealth.Change, to logger: BrokerLogger) {
        switch change {
        case .wentDown(let url, let error, let cause):
            var fields: [(String, LogValue)] = [("url", .string(WebhookDelivery.displayURL(url))), ("error", .string(error))]
            if let cause { fields.append(("cause", .string(cause.rawValue))) }
            logger.log(.warning, "webhook receiver down; sending it one delivery at a time until it answers", fields)
        case .cameBack(let url, let failures, let seconds):
            logger.log(
                .info, "webhook receiver back up; delivery resumes",
                [
                    ("url", .string(WebhookDelivery.displayURL(url))), ("failed_attempts", .int(failures)),
                    ("down_seconds", .double(seconds, decimals: 1)),
                ])
        }
    }

    /// One log line per attempt: info when delivered, warning when it will be retried, error when dropped; none
    /// for a retry because the receiver is down, which its one receiver-down line tells.
    static func log(_ report: WebhookDispatcher.Report, to logger: BrokerLogger) {
        let d = report.delivery
        var fields: [(String, LogValue)] = [
            ("event", .string(d.eventID)), ("type", .string(d.eventType)),
            ("url", .string(d.displayURL)), ("attempt", .int(d.attempts + 1)),
            ("duration_ms", .double(report.duration * 1000, decimals: 1)),
        ]
        if let account = d.accountID { fields.append(("account", .string(account.string))) }
        if let failure = report.failure { fields.append(("error", .string(failure))) }
        if let cause = report.cause { fields.append(("cause", .string(cause.rawValue))) }
        if let problem = report.storeError {
            fields.append(("store_error", .string(problem.message)))
        }
        switch report.result {
        case .delivered:
            logger.log(.info, "webhook delivered", fields)
        case .retrying(let next):
            if report.receiverDown { return }
            logger.log(.warning, "webhook delivery failed; will retry", fields + [("next_attempt_at", .string(RFC3339Date.format(next)))])
        case .dropped:
            logger.log(.error, "webhook delivery dropped", fields)
        }
    }
}

/// An ``EventSink`` that logs every event it could not record, then throws as the inner sink did.
struct LoggedEventSink: EventSink {
    /// The sink that writes.
    let inner: any EventSink
    /// Where failures are told.
    let logger: BrokerLogger

    /// Records through the inner sink; logs at ERROR what it could not record.
    func record(_ type: BrokerEventType, _ data: BrokerEventData) async throws(StoreError) {
        do {
            try await inner.record(type, data)
        } catch {
            var fields: [(String, LogValue)] = [
                ("type", .string(type.rawValue)), ("provider", .string(data.provider)),
                ("error", .string(error.message)),
            ]
            if let account = data.accountID { fields.append(("account", .string(account.string))) }
            logger.log(.error, "webhook event not recorded", fields)
            throw error
        }
    }

    /// The inner sink's outbox.
    var changeOutbox: (any WebhookOutbox)? { inner.changeOutbox }

    /// The inner sink's deliveries.
    func deliveries(_ type: BrokerEventType, _ data: BrokerEventData) -> [WebhookDelivery] {
        inner.deliveries(type, data)
    }

    /// Tells the inner sink.
    func appended() {
        inner.appended()
    }
}
