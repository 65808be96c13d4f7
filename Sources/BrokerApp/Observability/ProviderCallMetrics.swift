import BrokerCore
import Synchronization

/// How long calls to providers take and how often they fail, by provider and step: the app's ``ProviderCallObserver``.
///
/// Provider names come from the registry (only a configured provider's
/// exchange calls out) and steps from ``ProviderStep``, so the label set is
/// bounded by the configuration whatever requests arrive.
final class ProviderCallMetrics: ProviderCallObserver {
    /// Bucket bounds in seconds: provider calls take tens of milliseconds to the upstream timeout.
    static let bounds: [Double] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    /// One provider and step.
    struct Key: Hashable, Sendable {
        var provider: String
        var step: ProviderStep
    }

    /// One provider and step's durations and failures by reason (a ``BrokerError/code``).
    struct Series: Sendable {
        var duration = Histogram(bounds: ProviderCallMetrics.bounds)
        var failures: [String: UInt64] = [:]
    }

    private let table = Mutex<[Key: Series]>([:])

    /// Starts with nothing observed.
    init() {}

    func providerCallFinished(provider: String, step: ProviderStep, seconds: Double, error: BrokerError?) {
        table.withLock { table in
            let key = Key(provider: provider, step: step)
            var series = table[key] ?? Series()
            series.duration.observe(seconds)
            if let error { series.failures[error.code, default: 0] &+= 1 }
            table[key] = series
        }
    }

    /// Every provider and step observed so far, sorted by provider, then step.
    func snapshot() -> [(key: Key, series: Series)] {
        let steps = ProviderStep.allCases
        return table.withLock { Array($0) }.map { (key: $0.key, series: $0.value) }.sorted {
            $0.key.provider != $1.key.provider
                ? $0.key.provider < $1.key.provider
                : steps.firstIndex(of: $0.key.step)! < steps.firstIndex(of: $1.key.step)!
        }
    }

    /// `broker_provider_call_duration_seconds{provider,step}` and `broker_provider_call_failures_total{provider,step,reason}`.
    func render() -> String {
        let observed = snapshot()
        var out =
            "# HELP broker_provider_call_duration_seconds Time a call to a provider took, from sending to the checked answer, by provider and step.\n"
        out += "# TYPE broker_provider_call_duration_seconds histogram\n"
        for (key, series) in observed {
            out += MetricsRenderer.histogram("broker_provider_call_duration_seconds", labels: labels(key), series.duration)
        }
        out += "# HELP broker_provider_call_failures_total Failed calls to providers, by provider, step and reason (the error code).\n"
        out += "# TYPE broker_provider_call_failures_total counter\n"
        for (key, series) in observed {
            for (reason, count) in series.failures.sorted(by: { $0.key < $1.key }) {
                out += "broker_provider_call_failures_total{\(labels(key)),reason=\"\(MetricsRenderer.escape(reason))\"} \(count)\n"
            }
        }
        return out
    }

    private func labels(_ key: Key) -> String {
        "provider=\"\(MetricsRenderer.escape(key.provider))\",step=\"\(key.step.rawValue)\""
    }
}
