import Foundation

/// One account's refresh backoff: failures in a row, since when, when the next try may start, and what the last try ran into.
///
/// It holds no token or secret: the error is an upstream error whose reason
/// was already redacted, so the state may be shared with other replicas.
public struct RefreshBackoff: Sendable, Equatable {
    /// Consecutive transient failures, at least 1.
    public var failures: Int
    /// The earliest time of the next try that respects backoff.
    public var notBefore: Date
    /// The last try's error, which readers of an expired account get while the backoff lasts.
    public var lastError: BrokerError
    /// When the first failure of this run happened, from which the give-up period counts; nil in a state an
    /// older version wrote, whose run is then counted from its next failure.
    public var firstFailureAt: Date?

    /// Creates a state; `failures` below 1 counts as 1, and an error other than an upstream one is recorded as an upstream error with its message.
    public init(failures: Int, notBefore: Date, lastError: BrokerError, firstFailureAt: Date? = nil) {
        self.failures = max(1, failures)
        self.notBefore = notBefore
        self.firstFailureAt = firstFailureAt
        switch lastError {
        case .upstreamError, .upstreamTimeout:
            self.lastError = lastError
        default:
            self.lastError = .upstreamError(step: "token_refresh", reason: lastError.message)
        }
    }

    /// Whether a try at `now` must wait.
    public func isBackingOff(at now: Date) -> Bool {
        now < notBefore
    }
}

extension RefreshBackoff {
    /// Field names of the shared encoding, one JSON object per account.
    private enum Field {
        static let failures = "failures"
        static let notBefore = "not_before_ms"
        static let firstFailure = "first_failure_ms"
        static let error = "error"
        static let step = "step"
        static let reason = "reason"
    }

    /// The state as a small JSON object, for stores shared between replicas.
    public var encoded: [UInt8] {
        var object: [String: Any] = [
            Field.failures: failures,
            Field.notBefore: Self.milliseconds(notBefore),
            Field.error: lastError.code,
        ]
        // Added later: older versions ignore it, and states they wrote decode without it.
        if let firstFailureAt { object[Field.firstFailure] = Self.milliseconds(firstFailureAt) }
        switch lastError {
        case .upstreamError(let step, let reason):
            object[Field.step] = step
            object[Field.reason] = reason
        case .upstreamTimeout(let step):
            object[Field.step] = step
        default:
            break
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return [UInt8](data)
    }

    /// `date` in whole milliseconds since 1970, as the encoding keeps times.
    private static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        // A clock injected by a caller could be anywhere; the conversion must not trap.
        guard value.isFinite, abs(value) < Double(1 << 50) else { return 0 }
        return Int64(value)
    }

    /// The state in `bytes` as ``encoded`` wrote it (with or without the first failure's time); nil for anything else,
    /// which a store treats as no backoff.
    ///
    /// The bytes come from a shared store: counts and times are range-checked,
    /// and text fields are length-limited, so a damaged value cannot trap or
    /// flood an answer.
    public init?(encoded bytes: [UInt8]) {
        guard bytes.count <= 4096,
            let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
            let failures = object[Field.failures].flatMap(ProviderValue.integer), failures >= 1,
            let milliseconds = object[Field.notBefore].flatMap(ProviderValue.integer),
            abs(milliseconds) < 1 << 50,
            let step = object[Field.step] as? String, step.utf8.count <= 64
        else { return nil }
        let error: BrokerError
        switch object[Field.error] as? String {
        case "upstream_error":
            guard let reason = object[Field.reason] as? String, reason.utf8.count <= 1024 else { return nil }
            error = .upstreamError(step: step, reason: reason)
        case "upstream_timeout":
            error = .upstreamTimeout(step: step)
        default:
            return nil
        }
        var firstFailureAt: Date?
        if let value = object[Field.firstFailure] {
            guard let first = ProviderValue.integer(value), abs(first) < 1 << 50 else { return nil }
            firstFailureAt = Date(timeIntervalSince1970: Double(first) / 1000)
        }
        self.init(
            failures: min(failures, 1_000), notBefore: Date(timeIntervalSince1970: Double(milliseconds) / 1000), lastError: error,
            firstFailureAt: firstFailureAt)
    }
}
