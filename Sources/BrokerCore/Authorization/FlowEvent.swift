/// What became of one sign-in, as ``AuthorizationService`` reports it for metrics.
///
/// Providers are named only as the registry (or a stored flow) names them,
/// never as a request spelled them, so the set of names a listener sees is
/// bounded by the configuration.
public enum FlowEvent: Sendable, Equatable {
    /// A flow was stored and the browser sent to the provider.
    case started(provider: String)
    /// A callback completed a flow and the account was stored.
    case completed(provider: String)
    /// A completed flow's token answer had more other fields than ``TokenExtras/maximumBytes``; none were kept.
    case extrasDropped(provider: String)
    /// Starting or completing a flow of a known provider failed; ``BrokerError/code`` is the reason.
    case failed(provider: String, error: BrokerError)
    /// A callback's state matched no pending flow: unknown, already used, or purged after expiry.
    case unmatched
    /// A device sign-in's token endpoint was polled (RFC 8628 §3.4) and answered `answer`.
    case devicePolled(provider: String, answer: DevicePollAnswer)

    /// What one device poll got back, as a bounded label.
    public enum DevicePollAnswer: String, Sendable, CaseIterable {
        /// `authorization_pending`: the person has not finished.
        case pending
        /// `slow_down`: the interval was raised by 5 seconds (RFC 8628 §3.5).
        case slowDown = "slow_down"
        /// No answer in time: the interval was doubled.
        case timeout
        /// Tokens: the sign-in completed.
        case tokens
        /// Any refusal (`access_denied`, `expired_token`, an error): the sign-in ended failed.
        case failed
    }
}
