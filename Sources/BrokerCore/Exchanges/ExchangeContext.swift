import Foundation

/// What every exchange needs from the broker around it: the outbound client, the redirect URI, the other providers, the clock and the call observer.
struct ExchangeContext: Sendable {
    /// The outbound client for provider calls.
    let upstream: any UpstreamClient
    /// The broker's fixed redirect URI (RFC 9700 §4.1).
    let redirectURI: String
    /// Every configured provider, for checks that compare one provider with the others (RFC 9207 `iss`).
    let registry: ProviderRegistry
    /// The injected clock.
    let now: @Sendable () -> Date
    /// Hears of every provider call, for metrics; nil reports nothing.
    let observer: (any ProviderCallObserver)?
    /// The provider the exchange built from this context talks to; set by ``scoped(to:)``.
    private(set) var provider = ""

    /// A context for no provider in particular; ``scoped(to:)`` names one.
    init(
        upstream: any UpstreamClient, redirectURI: String, registry: ProviderRegistry, now: @escaping @Sendable () -> Date,
        observer: (any ProviderCallObserver)? = nil
    ) {
        self.upstream = upstream
        self.redirectURI = redirectURI
        self.registry = registry
        self.now = now
        self.observer = observer
    }

    /// This context for the exchange of `provider`: its calls are reported under that name.
    func scoped(to provider: String) -> ExchangeContext {
        var scoped = self
        scoped.provider = provider
        return scoped
    }

    /// The sending, step naming, redaction and reporting of this provider's calls.
    var call: ProviderCall { ProviderCall(upstream: upstream, provider: provider, observer: observer) }

    /// The exchange for `provider`, as ``ExchangeRegistry`` maps its kind; throws when the provider lacks a setting its kind needs.
    func exchange(for provider: ProviderConfiguration) throws(BrokerError) -> any ProviderExchange {
        try ExchangeRegistry.exchange(for: provider, in: self)
    }

    /// How to revoke `provider`'s accounts, as ``ExchangeRegistry/revocation(for:in:)`` finds it; nil when it has no revocation.
    func revocation(for provider: ProviderConfiguration) throws(BrokerError) -> ExchangeRegistry.Revocation? {
        try ExchangeRegistry.revocation(for: provider, in: self)
    }
}
