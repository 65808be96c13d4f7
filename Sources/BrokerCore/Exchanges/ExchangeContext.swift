import Foundation

/// What every exchange needs from the broker around it: the outbound client, the redirect URI, the other providers and the clock.
struct ExchangeContext: Sendable {
    /// The outbound client for provider calls.
    let upstream: any UpstreamClient
    /// The broker's fixed redirect URI (RFC 9700 §4.1).
    let redirectURI: String
    /// Every configured provider, for checks that compare one provider with the others (RFC 9207 `iss`).
    let registry: ProviderRegistry
    /// The injected clock.
    let now: @Sendable () -> Date

    /// The exchange for `provider`, as ``ExchangeRegistry`` maps its kind.
    func exchange(for provider: ProviderConfiguration) -> any ProviderExchange {
        ExchangeRegistry.exchange(for: provider, in: self)
    }
}
