import Foundation

/// What a device sign-in (RFC 8628) keeps while the broker polls for it: the device code and when to poll next.
///
/// Kept as a member of the pending flow, so it is shared by every replica and survives a restart exactly as
/// flows do; the flow is taken (single use) only when the poll ends, completed or failed.
public struct DeviceContext: Sendable, Equatable {
    /// The device verification code (RFC 8628 §3.2 `device_code`), sent on every poll; sealed at rest like other flow secrets.
    public var deviceCode: Secret
    /// Seconds between polls (RFC 8628 §3.2 `interval`, 5 unless the provider said); raised by 5 at each `slow_down` (§3.5).
    public var interval: Int
    /// The earliest time of the next poll.
    public var nextPollAt: Date

    /// Whether the next poll is due at `now`.
    ///
    /// Stored times keep milliseconds (RFC 3339 with a fraction), so a time read back may lie up to half a
    /// millisecond after the one written: a millisecond's tolerance keeps a poll due at the instant it was set for.
    public func isDue(at now: Date) -> Bool {
        nextPollAt.timeIntervalSince(now) <= 0.001
    }

    /// A context polled every `interval` seconds from `nextPollAt`.
    public init(deviceCode: Secret, interval: Int, nextPollAt: Date) {
        self.deviceCode = deviceCode
        self.interval = interval
        self.nextPollAt = nextPollAt
    }
}
