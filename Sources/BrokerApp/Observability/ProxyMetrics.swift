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
        // The label from a fixed list, and one look-up of the provider's series: no string built or hashed twice per call.
        let label = status.map { Self.classLabels[min(max($0 / 100, 1), 5) - 1] } ?? "error"
        table.withLock { table in
            Self.update(&table[provider, default: Series()]) { series in
                if let seconds { series.latency.observe(seconds) }
                series.classes[label, default: 0] &+= 1
            }
        }
    }

    /// The status classes' labels, `1xx` to `5xx`.
    private static let classLabels = ["1xx", "2xx", "3xx", "4xx", "5xx"]

    /// Applies `change` to `series` in place (one dictionary access for both of a call's updates).
    private static func update(_ series: inout Series, _ change: (inout Series) -> Void) { change(&series) }

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
