/// A failed refresh grant: the error API clients see, and the provider's `Retry-After` when it sent one.
///
/// The refresh coordinator needs both: the error to answer readers with (its
/// code and status unchanged) and the provider's own estimate of when to try
/// again, which lengthens the backoff (RFC 9110 §10.2.3, RFC 6585 §4).
public struct RefreshFailure: Error, Sendable, Equatable {
    /// What went wrong, as a provider exchange's refresh grant throws it.
    public var error: BrokerError
    /// The raw `Retry-After` field value of a 429 or 5xx answer, unparsed; nil when there was none.
    public var retryAfter: String?

    /// Creates a failure.
    public init(_ error: BrokerError, retryAfter: String? = nil) {
        self.error = error
        self.retryAfter = retryAfter
    }
}
