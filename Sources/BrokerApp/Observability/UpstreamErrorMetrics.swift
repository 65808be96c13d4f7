import BrokerCore
import Synchronization

/// Failed outbound calls by what they were for (`provider`, `webhook`) and cause: `broker_upstream_errors_total`.
///
/// Both labels come from closed sets (``UpstreamErrorMetrics/Target`` and ``UpstreamCause``), so the series are
/// bounded whatever the peers do. Every series starts at zero, so a rate over it exists before the first failure.
final class UpstreamErrorMetrics: Sendable {
    /// What an outbound call was for.
    enum Target: String, Sendable, CaseIterable {
        /// A provider call: sign-in, refresh, revocation, app token, OpenID discovery.
        case provider
        /// A webhook delivery.
        case webhook
    }

    private let counts = Mutex<[Target: [UpstreamCause: UInt64]]>([:])

    /// Counters at zero.
    init() {}

    /// Counts one failed call.
    func record(_ cause: UpstreamCause, target: Target) {
        counts.withLock { $0[target, default: [:]][cause, default: 0] &+= 1 }
    }

    /// The count for `cause` and `target` so far.
    func count(_ cause: UpstreamCause, target: Target) -> UInt64 {
        counts.withLock { $0[target]?[cause] ?? 0 }
    }

    /// The exposition text.
    func render() -> String {
        let table = counts.withLock { $0 }
        var out =
            "# HELP broker_upstream_errors_total Outbound calls that got no usable HTTP answer, by target (provider, webhook) and cause.\n"
        out += "# TYPE broker_upstream_errors_total counter\n"
        for target in Target.allCases {
            for cause in UpstreamCause.allCases {
                let count = table[target]?[cause] ?? 0
                out += "broker_upstream_errors_total{target=\"\(target.rawValue)\",cause=\"\(cause.rawValue)\"} \(count)\n"
            }
        }
        return out
    }
}
