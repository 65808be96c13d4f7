import BrokerCore
import BrokerHTTP
import Foundation

/// Renders metrics in the Prometheus text exposition format (version 0.0.4).
enum MetricsRenderer {
    /// The `Content-Type` of the rendered text.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The HTTP server's requests by route and status class, its latency histogram per route, and its connections.
    static func renderHTTP(_ http: HTTPMetricsSnapshot) -> String {
        var out = ""
        out += "# HELP broker_http_requests_total HTTP responses by route and status class.\n"
        out += "# TYPE broker_http_requests_total counter\n"
        for (r, route) in http.routes.enumerated() {
            for c in 0..<5 where http.requests[r][c] > 0 {
                out += "broker_http_requests_total{route=\"\(escape(route))\",status=\"\(c + 1)xx\"} \(http.requests[r][c])\n"
            }
        }
        out += "# HELP broker_http_request_duration_seconds Time from a request's first byte to its response, by route.\n"
        out += "# TYPE broker_http_request_duration_seconds histogram\n"
        for (r, route) in http.routes.enumerated() where http.latencyCounts[r].contains(where: { $0 > 0 }) {
            out += histogram(
                "broker_http_request_duration_seconds", labels: "route=\"\(escape(route))\"",
                bounds: http.latencyBounds, counts: http.latencyCounts[r], sum: http.latencySum[r])
        }
        out += single("broker_http_open_connections", .gauge, "Connections open now.", http.openConnections)
        out += single("broker_http_connections_accepted_total", .counter, "Connections accepted since start.", http.acceptedConnections)
        return out
    }

    /// `broker_refresh_attempts_total{provider}` and `broker_refresh_failures_total{provider,reason}`.
    static func renderRefresh(_ refresh: [RefreshMetrics.Counts]) -> String {
        var out = ""
        out += "# HELP broker_refresh_attempts_total Token refresh calls to providers, by provider.\n"
        out += "# TYPE broker_refresh_attempts_total counter\n"
        for counts in refresh {
            out += "broker_refresh_attempts_total{provider=\"\(escape(counts.provider))\"} \(counts.attempts)\n"
        }
        out += "# HELP broker_refresh_failures_total Failed token refreshes, by provider and reason (invalid_grant or transient).\n"
        out += "# TYPE broker_refresh_failures_total counter\n"
        for counts in refresh {
            for reason in RefreshCoordinator.Event.FailureReason.allCases {
                out +=
                    "broker_refresh_failures_total{provider=\"\(escape(counts.provider))\",reason=\"\(reason.rawValue)\"} \(counts.failures(reason))\n"
            }
        }
        return out
    }

    /// `broker_accounts{status}`: every status, zeros included, so a status that empties reads 0 rather than vanishing.
    static func renderAccounts(_ counts: AccountStatusCounts) -> String {
        var out = "# HELP broker_accounts Stored accounts by status (expired: past expiry with no refresh token).\n"
        out += "# TYPE broker_accounts gauge\n"
        out += "broker_accounts{status=\"active\"} \(counts.active)\n"
        out += "broker_accounts{status=\"expired\"} \(counts.expired)\n"
        out += "broker_accounts{status=\"\(AccountStatus.reauthorizationRequired.rawValue)\"} \(counts.reauthorizationRequired)\n"
        out += "broker_accounts{status=\"\(AccountStatus.refreshExhausted.rawValue)\"} \(counts.refreshExhausted)\n"
        out += "broker_accounts{status=\"\(AccountStatus.invalid.rawValue)\"} \(counts.invalid)\n"
        return out
    }

    /// The Prometheus metric types used here.
    enum MetricType: String { case gauge, counter }

    /// One metric without labels: its `# HELP` and `# TYPE` lines and its sample.
    static func single(_ name: String, _ type: MetricType, _ help: String, _ value: some CustomStringConvertible) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) \(type.rawValue)\n\(name) \(value)\n"
    }

    /// One histogram series with `labels` (already escaped): cumulative `_bucket` lines up to `+Inf`, `_sum` and `_count`.
    static func histogram(_ name: String, labels: String, bounds: [Double], counts: [UInt64], sum: Double) -> String {
        var out = ""
        var cumulative: UInt64 = 0
        for (i, bound) in bounds.enumerated() {
            cumulative += counts[i]
            out += "\(name)_bucket{\(labels),le=\"\(bound)\"} \(cumulative)\n"
        }
        cumulative += counts[bounds.count]
        out += "\(name)_bucket{\(labels),le=\"+Inf\"} \(cumulative)\n"
        out += "\(name)_sum{\(labels)} \(sum)\n"
        out += "\(name)_count{\(labels)} \(cumulative)\n"
        return out
    }

    /// ``histogram(_:labels:bounds:counts:sum:)`` of a ``Histogram``.
    static func histogram(_ name: String, labels: String, _ histogram: Histogram) -> String {
        self.histogram(name, labels: labels, bounds: histogram.bounds, counts: histogram.counts, sum: histogram.sum)
    }

    /// Label values escape backslash, quote and newline.
    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
