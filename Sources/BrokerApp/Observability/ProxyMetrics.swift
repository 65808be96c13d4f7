import BrokerCore
import Synchronization

/// Proxied calls (`/proxy/…`) by provider: how many ended in each status class, and how long the provider took to
/// answer (to the head of its answer; a body streams afterwards at the caller's pace).
///
/// Providers come from the registry (a call is counted only once its account's provider is known), and classes are
/// `2xx` to `5xx` or `error` (no answer: refused, unreachable, timed out), so the label set is bounded.
final class ProxyMetrics: Sendable {
    /// Bucket bounds in seconds, from a local API to the proxy's timeout.
    static let bounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    private struct Series: Sendable {
        var latency = Histogram(bounds: ProxyMetrics.bounds)
        var classes: [String: UInt64] = [:]
        var renewals: UInt64 = 0
    }

    private let table = Mutex<[String: Series]>([:])

    /// Starts with nothing observed.
    init() {}

    /// A call to `provider` ended with `status` (nil: no answer) after the provider took `seconds` to answer.
    func callFinished(provider: String, status: Int?, seconds: Double?) {
        let label = status.map { "\(min(max($0 / 100, 1), 5))xx" } ?? "error"
        table.withLock { table in
            if let seconds { table[provider, default: Series()].latency.observe(seconds) }
            table[provider, default: Series()].classes[label, default: 0] &+= 1
        }
    }

    /// `provider` refused a call's token with `401` and the call went on with a renewed one.
    func tokenRenewed(provider: String) {
        table.withLock { $0[provider, default: Series()].renewals &+= 1 }
    }

    /// `broker_proxy_requests_total{provider,class}`, `broker_proxy_upstream_seconds{provider}` and
    /// `broker_proxy_renewed_tokens_total{provider}`.
    func render() -> String {
        let observed = table.withLock { $0 }.sorted { $0.key < $1.key }
        var out = "# HELP broker_proxy_requests_total Proxied calls by provider and the class of the status sent back (error: none).\n"
        out += "# TYPE broker_proxy_requests_total counter\n"
        for (provider, series) in observed {
            for (label, count) in series.classes.sorted(by: { $0.key < $1.key }) {
                out += "broker_proxy_requests_total{provider=\"\(MetricsRenderer.escape(provider))\",class=\"\(label)\"} \(count)\n"
            }
        }
        out += "# HELP broker_proxy_upstream_seconds Time from sending a proxied call to the head of the provider's answer.\n"
        out += "# TYPE broker_proxy_upstream_seconds histogram\n"
        for (provider, series) in observed where series.latency.counts.contains(where: { $0 > 0 }) {
            out += MetricsRenderer.histogram(
                "broker_proxy_upstream_seconds", labels: "provider=\"\(MetricsRenderer.escape(provider))\"", series.latency)
        }
        out += "# HELP broker_proxy_renewed_tokens_total Proxied calls refused with 401 that went on with a renewed token "
        out += "(refreshed by this call, or by another one or replica first).\n"
        out += "# TYPE broker_proxy_renewed_tokens_total counter\n"
        for (provider, series) in observed where series.renewals > 0 {
            out += "broker_proxy_renewed_tokens_total{provider=\"\(MetricsRenderer.escape(provider))\"} \(series.renewals)\n"
        }
        return out
    }
}
