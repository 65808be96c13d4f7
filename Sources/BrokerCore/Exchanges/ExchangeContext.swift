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

    /// The exchange for `provider`, as ``ExchangeRegistry`` maps its kind; throws when the provider lacks a setting its kind needs.
    func exchange(for provider: ProviderConfiguration) throws(BrokerError) -> any ProviderExchange {
        try ExchangeRegistry.exchange(for: provider, in: self)
    }

    /// How to revoke `provider`'s accounts, as ``ExchangeRegistry/revocation(for:in:)`` finds it; nil when it has no revocation.
    func revocation(for provider: ProviderConfiguration) throws(BrokerError) -> ExchangeRegistry.Revocation? {
        try ExchangeRegistry.revocation(for: provider, in: self)
    }
}
