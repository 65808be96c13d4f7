/// Which of a provider's grants the broker uses: people's sign-in, app tokens, or both.
///
/// The providers file names them `"grant"`: `"client_credentials"` for a
/// machine-to-machine entry (token endpoint and client credentials only, no
/// sign-in), or an array of `"authorization_code"` and `"client_credentials"`
/// for a provider that does both. Absent, a provider has people's sign-in only.
public struct ProviderGrants: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: UInt8

    /// Creates a set from its bits.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// People connect accounts: the authorization code grant (RFC 6749 §4.1), or the kind's own sign-in (OAuth 1.0a, TMDB).
    public static let authorizationCode = ProviderGrants(rawValue: 1 << 0)
    /// Back ends get app tokens with the client credentials grant (RFC 6749 §4.4).
    public static let clientCredentials = ProviderGrants(rawValue: 1 << 1)

    /// Each grant with its providers-file name, in the order `/providers` lists them.
    public static let names: [(grant: ProviderGrants, name: String)] = [
        (.authorizationCode, "authorization_code"), (.clientCredentials, "client_credentials"),
    ]

    /// The providers-file names of the grants in this set, in ``names`` order.
    public var listed: [String] {
        Self.names.filter { contains($0.grant) }.map(\.name)
    }
}
