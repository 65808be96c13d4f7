import BrokerCore
import BrokerHTTP
import Foundation

/// Renders counters in the Prometheus text exposition format (version 0.0.4).
enum MetricsRenderer {
    /// The `Content-Type` of the rendered text.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The HTTP server's counters, readiness, and the token refresh counters by provider.
    static func render(_ http: HTTPMetricsSnapshot, ready: Bool, refresh: [RefreshMetrics.Counts] = []) -> String {
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
            let label = "route=\"\(escape(route))\""
            var cumulative: UInt64 = 0
            for (i, bound) in http.latencyBounds.enumerated() {
                cumulative += http.latencyCounts[r][i]
                out += "broker_http_request_duration_seconds_bucket{\(label),le=\"\(bound)\"} \(cumulative)\n"
            }
            cumulative += http.latencyCounts[r][http.latencyBounds.count]
            out += "broker_http_request_duration_seconds_bucket{\(label),le=\"+Inf\"} \(cumulative)\n"
            out += "broker_http_request_duration_seconds_sum{\(label)} \(http.latencySum[r])\n"
            out += "broker_http_request_duration_seconds_count{\(label)} \(cumulative)\n"
        }
        out += single("broker_http_open_connections", .gauge, "Connections open now.", http.openConnections)
        out += single("broker_http_connections_accepted_total", .counter, "Connections accepted since start.", http.acceptedConnections)
        out += single("broker_ready", .gauge, "Whether the broker is ready for traffic (1) or not (0).", ready ? 1 : 0)
        out += renderRefresh(refresh)
        out += ProcessMetrics.render()
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
                out += "broker_refresh_failures_total{provider=\"\(escape(counts.provider))\",reason=\"\(reason.rawValue)\"} \(counts.failures(reason))\n"
            }
        }
        return out
    }

    /// The Prometheus metric types used here.
    enum MetricType: String { case gauge, counter }

    /// One metric without labels: its `# HELP` and `# TYPE` lines and its sample.
    static func single(_ name: String, _ type: MetricType, _ help: String, _ value: some CustomStringConvertible) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) \(type.rawValue)\n\(name) \(value)\n"
    }

    /// Label values escape backslash, quote and newline.
    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
