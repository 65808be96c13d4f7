import Foundation

/// Reads the discovery documents of the registry's OpenID providers into its ``OIDCDiscoveryCache``, retrying until each loads.
///
/// Each document is fetched through the same ``UpstreamClient`` as every
/// provider call, so it follows no redirect, keeps to the outbound deadline and
/// size cap, and is reported to the call observer under the step `discovery`.
/// A provider whose document cannot be read stays unavailable and the rest of
/// the broker works on; the try is repeated with exponential backoff.
public struct OIDCDiscovery: Sendable {
    /// The providers, whose ``ProviderRegistry/discovery`` cache is filled.
    public let registry: ProviderRegistry
    /// The outbound client.
    let upstream: any UpstreamClient
    /// Hears of every fetch, for metrics; nil reports nothing.
    let observer: (any ProviderCallObserver)?

    /// Creates a loader for `registry`'s OpenID providers that fetches through `upstream`.
    public init(registry: ProviderRegistry, upstream: any UpstreamClient, providerCalls: (any ProviderCallObserver)? = nil) {
        self.registry = registry
        self.upstream = upstream
        self.observer = providerCalls
    }

    /// One try for `provider`: fetches and checks its document and records the outcome, which it returns.
    @discardableResult
    public func load(_ provider: String) async -> OIDCDiscoveryCache.State {
        let state: OIDCDiscoveryCache.State
        do throws(BrokerError) {
            state = .loaded(try await fetch(provider))
        } catch {
            state = .failed(Self.reason(error))
        }
        registry.discovery.record(state, for: provider)
        return state
    }

    /// One try for every tracked provider whose document is not loaded yet, one after another.
    public func loadPending() async {
        for provider in registry.discovery.providers {
            if case .loaded = registry.discovery.state(of: provider) { continue }
            await load(provider)
        }
    }

    /// Tries every tracked provider until its document loads or the task is cancelled, each on its own backoff.
    ///
    /// After a failed try the next waits `initialDelay` seconds, doubling after
    /// each further failure up to `maximumDelay`, less up to a tenth at random so
    /// replicas started together spread out. `report` hears every try's outcome.
    public func keepLoading(
        initialDelay: Double = 1, maximumDelay: Double = 300,
        report: @escaping @Sendable (String, OIDCDiscoveryCache.State) -> Void = { _, _ in }
    ) async {
        await DiscoveryCache<OIDCProviderMetadata>.keepTrying(
            registry.discovery.providers, initialDelay: initialDelay, maximumDelay: maximumDelay
        ) { provider in
            let state = await load(provider)
            report(provider, state)
            if case .loaded = state { return true }
            return false
        }
    }

    /// The checked metadata of `provider`'s document, or the failure.
    func fetch(_ name: String) async throws(BrokerError) -> OIDCProviderMetadata {
        guard let provider = registry.provider(named: name) else { throw .unknownProvider(name) }
        let settings = try OIDCSettings(provider)
        let step = ProviderStep.discovery
        let request = UpstreamRequest(
            method: "GET", url: OIDCProviderMetadata.documentURL(issuer: settings.issuer),
            headers: OAuth2Settings.merging(
                provider.requestHeaders, into: [("Accept", "application/json"), ("User-Agent", ProviderCall.userAgent)]))
        let call = ProviderCall(upstream: upstream, provider: name, observer: observer)
        let secrets = [provider.clientSecret?.value].compactMap { $0 }
        return try await call.perform(request, step: step, secrets: secrets) { response throws(BrokerError) in
            guard (200..<300).contains(response.status) else {
                throw .upstreamError(step: step.rawValue, reason: "HTTP \(response.status) (not a 2xx status)")
            }
            switch OIDCProviderMetadata.parse(response.body, issuer: settings.issuer) {
            case .success(let metadata):
                _ = try settings.oauth2Configuration(with: metadata)
                return metadata
            case .failure(let problem):
                throw .upstreamError(step: step.rawValue, reason: problem.description)
            }
        }
    }

    /// The phrase `/providers` and the log give for a failed try.
    static func reason(_ error: BrokerError) -> String {
        switch error {
        case .upstreamError(_, let reason): reason
        case .upstreamTimeout: "the issuer did not answer in time"
        case .providerUnavailable(_, let reason): reason
        default: error.message
        }
    }
}
