import BrokerCore
import BrokerHTTP
import Synchronization

/// Everything `/metrics` reports, and the handler that renders it on the main port or the metrics listener.
///
/// Counters are kept here as events happen; the account gauge and readiness
/// are read at scrape time (see ``AccountStatusCounting`` for why that is cheap).
final class BrokerMetrics: Sendable {
    /// The main server, whose request counters are reported (set once it exists).
    let server = ServerBox()
    /// Token refresh calls and failures by provider.
    let refresh = RefreshMetrics()
    /// Durations and failures of every provider call by provider and step.
    let providerCalls = ProviderCallMetrics()
    /// Proxied calls by provider and status class.
    let proxy = ProxyMetrics()
    /// Failed outbound calls by target and cause.
    let upstreamErrors: UpstreamErrorMetrics
    /// Sign-ins started, completed and failed by provider.
    let flows: FlowMetrics
    /// App token fetches by provider and outcome.
    let appTokens: AppTokenMetrics
    /// What the store adds: the file store's sizes, Redis's round trips and cache.
    let storage: StorageMetrics
    /// The audit file (`BROKER_AUDIT_LOG`), whose lost and unwritten events are reported; nil when unset.
    let auditFile = Mutex<AuditLogFile?>(nil)

    /// Metrics whose per-provider series start at zero for each of `providers`, and for each of `appTokenProviders`;
    /// `upstreamErrors` is shared with the clients that count into it.
    init(
        providers: [String], appTokenProviders: [String] = [], storage: StorageMetrics = StorageMetrics(),
        upstreamErrors: UpstreamErrorMetrics = UpstreamErrorMetrics()
    ) {
        self.storage = storage
        self.upstreamErrors = upstreamErrors
        flows = FlowMetrics(providers: providers)
        appTokens = AppTokenMetrics(providers: appTokenProviders)
    }

    /// The whole exposition text, or nil while the server does not exist yet.
    func render(readiness: Readiness, accounts: AccountService, webhooks: Webhooks?) async -> String? {
        guard let http = server.snapshot() else { return nil }
        let ready = await readiness.check() == nil
        var out = MetricsRenderer.renderHTTP(http)
        out += MetricsRenderer.single("broker_ready", .gauge, "Whether the broker is ready for traffic (1) or not (0).", ready ? 1 : 0)
        out += MetricsRenderer.renderRefresh(refresh.snapshot())
        out += providerCalls.render()
        out += proxy.render()
        out += upstreamErrors.render()
        out += flows.render()
        out += appTokens.render()
        // Left out when the store cannot be reached (broker_ready says so) or cannot count cheaply.
        if let counts = try? await accounts.statusCounts() { out += MetricsRenderer.renderAccounts(counts) }
        out += storage.records()
        if let webhooks { out += await webhooks.renderMetrics() }
        out += storage.connection()
        if let file = auditFile.withLock({ $0 }) { out += Self.renderAudit(file.health) }
        out += ProcessMetrics.render()
        return out
    }

    /// `GET /metrics`: 200 with the text, or 503 while starting.
    func handler(readiness: Readiness, accounts: AccountService, webhooks: Webhooks?) -> Router.Handler {
        .async({ [self] _ in
            guard let text = await render(readiness: readiness, accounts: accounts, webhooks: webhooks) else {
                return Response.error(.serviceUnavailable, code: "starting", message: "The server is starting.")
            }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: MetricsRenderer.contentType)
            return Response(status: .ok, headers: headers, body: Array(text.utf8))
        })
    }
}

/// Lets the metrics read the server they are served by, which exists only after its router.
final class ServerBox: Sendable {
    private let server = Mutex<HTTPServer?>(nil)
    func set(_ value: HTTPServer) { server.withLock { $0 = value } }
    func snapshot() -> HTTPMetricsSnapshot? { server.withLock { $0 }?.metricsSnapshot() }
}

extension BrokerMetrics {
    /// `broker_account_journal_bytes`, `broker_account_snapshot_bytes` and `broker_account_journal_generation`: a
    /// journal that keeps growing past its compaction point, or a generation that stops moving, means compactions fail.
    /// `broker_account_records_damaged`: accounts whose sealed secrets do not open (tampered or damaged); alert on any.
    static func renderFileStore(_ sizes: (generation: Int, journalBytes: Int, snapshotBytes: Int), damagedRecords: Int) -> String {
        MetricsRenderer.single(
            "broker_account_journal_bytes", .gauge, "Size of the file store's account journal (compacted in the background).",
            sizes.journalBytes)
            + MetricsRenderer.single(
                "broker_account_snapshot_bytes", .gauge, "Size of the file store's account snapshot.", sizes.snapshotBytes)
            + MetricsRenderer.single(
                "broker_account_journal_generation", .gauge, "Generation of the account journal; each compaction adds one.",
                sizes.generation)
            + MetricsRenderer.single(
                "broker_account_records_damaged", .gauge,
                "Accounts whose stored record is damaged (its sealed secrets do not open); reads of them answer 500 record_damaged.",
                damagedRecords)
    }

    /// `broker_audit_events_lost_total`, `broker_audit_events_unwritten` and `broker_audit_log_failing`: events the
    /// audit file dropped, events waiting to be written, and whether its writes fail now.
    static func renderAudit(_ health: AuditLogFile.Health) -> String {
        MetricsRenderer.single(
            "broker_audit_events_lost_total", .counter,
            "Audit events dropped: more waiting than memory keeps while the audit log cannot be written, or unwritten at shutdown.",
            health.lost)
            + MetricsRenderer.single(
                "broker_audit_events_unwritten", .gauge, "Audit events recorded and not yet written to the audit log.", health.unwritten)
            + MetricsRenderer.single(
                "broker_audit_log_failing", .gauge, "Whether the last write to the audit log failed (1) or not (0).",
                health.failure == nil ? 0 : 1)
    }
}
