import BrokerCore
import Synchronization

/// Counts app token fetches from providers by provider and outcome, for `/metrics`.
///
/// Only a configured client credentials provider is ever fetched from, so the
/// provider label is bounded by the configuration; the outcome is `issued` or
/// the error code (`upstream_error`, `upstream_timeout`).
final class AppTokenMetrics: Sendable {
    /// One provider and outcome.
    struct Key: Hashable, Sendable {
        var provider: String
        var outcome: String
    }

    private let counts = Mutex<[Key: UInt64]>([:])

    /// Starts with nothing counted; `providers` start at zero issued, so their series exist before the first fetch.
    init(providers: [String]) {
        counts.withLock { table in for provider in providers { table[Key(provider: provider, outcome: "issued")] = 0 } }
    }

    /// Counts one fetch.
    func record(_ event: AppTokenService.Event) {
        let key = Key(provider: event.provider, outcome: event.error?.code ?? "issued")
        counts.withLock { $0[key, default: 0] &+= 1 }
    }

    /// `broker_app_token_fetches_total{provider,outcome}`.
    func render() -> String {
        let rows = counts.withLock { Array($0) }.sorted {
            ($0.key.provider, $0.key.outcome) < ($1.key.provider, $1.key.outcome)
        }
        var out =
            "# HELP broker_app_token_fetches_total App tokens asked of providers with the client credentials grant, by provider and outcome (issued or the error code).\n"
        out += "# TYPE broker_app_token_fetches_total counter\n"
        for (key, count) in rows {
            out +=
                "broker_app_token_fetches_total{provider=\"\(MetricsRenderer.escape(key.provider))\",outcome=\"\(MetricsRenderer.escape(key.outcome))\"} \(count)\n"
        }
        return out
    }
}
