/// What a provider's exchange can do beyond beginning and completing a flow.
struct ExchangeCapabilities: OptionSet, Sendable {
    /// The raw bits.
    let rawValue: UInt8

    /// It trades a refresh token for new tokens (RFC 6749 §6).
    static let refresh = ExchangeCapabilities(rawValue: 1 << 0)
    /// It can end a grant at the provider (RFC 7009, or a session logout).
    static let revoke = ExchangeCapabilities(rawValue: 1 << 1)
    /// Its flows carry a PKCE verifier (RFC 7636).
    static let pkce = ExchangeCapabilities(rawValue: 1 << 2)
}
