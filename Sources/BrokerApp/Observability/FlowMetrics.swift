import BrokerCore
import Synchronization

/// Sign-ins started, completed and failed by provider (and failures by reason), from ``AuthorizationService``'s ``FlowEvent``s.
///
/// A provider is counted only under the name the registry or a stored flow
/// gives it, and a reason is a ``BrokerError/code``, so neither label can be
/// grown by what requests send.
final class FlowMetrics: Sendable {
    /// One provider's counters.
    struct Counts: Sendable, Equatable {
        var started: UInt64 = 0
        var completed: UInt64 = 0
        var failed: [String: UInt64] = [:]
        var devicePolls: [FlowEvent.DevicePollAnswer: UInt64] = [:]
    }

    private struct State {
        var providers: [String: Counts]
        var unmatched: UInt64 = 0
    }

    private let state: Mutex<State>

    /// Counters at zero for each of `providers` (the configured ones), so their series exist from the start.
    init(providers: [String]) {
        state = Mutex(State(providers: Dictionary(providers.map { ($0, Counts()) }, uniquingKeysWith: { a, _ in a })))
    }

    /// Counts `event`.
    func record(_ event: FlowEvent) {
        state.withLock { state in
            switch event {
            case .started(let provider): state.providers[provider, default: Counts()].started &+= 1
            case .completed(let provider): state.providers[provider, default: Counts()].completed &+= 1
            case .failed(let provider, let error): state.providers[provider, default: Counts()].failed[error.code, default: 0] &+= 1
            case .unmatched: state.unmatched &+= 1
            case .extrasDropped: break
            case .devicePolled(let provider, let answer):
                state.providers[provider, default: Counts()].devicePolls[answer, default: 0] &+= 1
            }
        }
    }

    /// Each provider's counters sorted by name, and the callbacks that matched no flow.
    func snapshot() -> (providers: [(name: String, counts: Counts)], unmatched: UInt64) {
        state.withLock { state in
            (state.providers.sorted { $0.key < $1.key }.map { (name: $0.key, counts: $0.value) }, state.unmatched)
        }
    }

    /// `broker_flows_started_total`, `broker_flows_completed_total`, `broker_flows_failed_total`,
    /// `broker_device_polls_total` and `broker_flows_unmatched_total`.
    func render() -> String {
        let (providers, unmatched) = snapshot()
        func label(_ name: String) -> String { "provider=\"\(MetricsRenderer.escape(name))\"" }
        var out = "# HELP broker_flows_started_total Sign-ins started (a flow stored and the browser sent to the provider), by provider.\n"
        out += "# TYPE broker_flows_started_total counter\n"
        for (name, counts) in providers { out += "broker_flows_started_total{\(label(name))} \(counts.started)\n" }
        out += "# HELP broker_flows_completed_total Sign-ins completed (the account stored), by provider.\n"
        out += "# TYPE broker_flows_completed_total counter\n"
        for (name, counts) in providers { out += "broker_flows_completed_total{\(label(name))} \(counts.completed)\n" }
        out +=
            "# HELP broker_flows_failed_total Sign-ins that failed at their start or their callback, by provider and reason (the error code).\n"
        out += "# TYPE broker_flows_failed_total counter\n"
        for (name, counts) in providers {
            for (reason, count) in counts.failed.sorted(by: { $0.key < $1.key }) {
                out += "broker_flows_failed_total{\(label(name)),reason=\"\(MetricsRenderer.escape(reason))\"} \(count)\n"
            }
        }
        out += "# HELP broker_device_polls_total Polls of a device sign-in's token endpoint (RFC 8628), by provider and answer.\n"
        out += "# TYPE broker_device_polls_total counter\n"
        for (name, counts) in providers {
            for answer in FlowEvent.DevicePollAnswer.allCases {
                guard let count = counts.devicePolls[answer] else { continue }
                out += "broker_device_polls_total{\(label(name)),answer=\"\(answer.rawValue)\"} \(count)\n"
            }
        }
        out += MetricsRenderer.single(
            "broker_flows_unmatched_total", .counter,
            "Callbacks whose state matched no pending flow (unknown, already used, or purged after expiry).", unmatched)
        return out
    }
}
