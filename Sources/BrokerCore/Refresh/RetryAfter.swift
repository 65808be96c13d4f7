import Foundation

/// Reads a provider's `Retry-After` field (RFC 9110 §10.2.3) as a number of seconds to wait.
///
/// `Retry-After = HTTP-date / delay-seconds`, where `delay-seconds = 1*DIGIT`.
/// The value is provider input: anything else (a sign, a fraction, words,
/// an empty value) is ignored rather than guessed at, a delay too long for any
/// integer saturates instead of trapping, and a date in the past means "now".
/// Callers clamp the result to their own maximum
/// (``RefreshCoordinator/Policy/retryAfterCap``).
public enum RetryAfter {
    /// The largest delay this parser returns; longer delays come back as this.
    public static let saturation: TimeInterval = 1e12

    /// Seconds from `now` that `fieldValue` asks a client to wait, never negative; nil when it is not a valid `Retry-After`.
    public static func delay(_ fieldValue: String, at now: Date) -> TimeInterval? {
        // RFC 9110 §5.5: a field value excludes leading and trailing whitespace (SP / HTAB).
        let value = trimmingOWS(fieldValue)
        guard !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return deltaSeconds(value)
        }
        guard let date = HTTPDate.parse(value, now: now) else { return nil }
        return min(saturation, max(0, date.timeIntervalSince(now)))
    }

    /// The value of a run of ASCII digits, saturating at ``saturation`` however many digits there are.
    static func deltaSeconds(_ digits: String) -> TimeInterval {
        var value: Int64 = 0
        for byte in digits.utf8 {
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            if Double(value) >= saturation { return saturation }
        }
        return Double(value)
    }

    /// `text` without leading and trailing spaces and horizontal tabs.
    static func trimmingOWS(_ text: String) -> String {
        let isOWS: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isOWS($0) }), let last = text.lastIndex(where: { !isOWS($0) }) else { return "" }
        return String(text[first...last])
    }
}
