/// Hears how each call to a provider went, for metrics; the core calls it, the app implements it.
///
/// The core knows nothing of how calls are counted or exported: it reports
/// the provider, the ``ProviderStep``, the time the call took and how it ended,
/// and the observer does the rest. Called once per call, on the calling task,
/// after the answer was checked; it must not block.
public protocol ProviderCallObserver: Sendable {
    /// One call to `provider` at `step` took `seconds` (sending, waiting and checking the answer) and ended with `error`, nil on success.
    func providerCallFinished(provider: String, step: ProviderStep, seconds: Double, error: BrokerError?)
}
