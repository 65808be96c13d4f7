import Foundation

extension ProvidersFileEntry {
    /// The providers-file key that says which grants the broker uses with a provider.
    static let grantKeys: Set<String> = ["grant"]

    /// Reads `grant`: `"client_credentials"` (app tokens only), `"authorization_code"` (sign-in only, the default),
    /// or an array of one or both names; JSON null keeps the default.
    ///
    /// Only an OAuth 2.0 provider has a client credentials grant (RFC 6749 §4.4).
    func applyGrant(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        guard let raw = settings["grant"], !(raw is NSNull) else { return }
        let expected = "must be \"authorization_code\", \"client_credentials\" or an array of them"
        let written: [Any] = (raw as? [Any]) ?? [raw]
        var grants: ProviderGrants = []
        for item in written {
            guard let text = item as? String, let grant = ProviderGrants.names.first(where: { $0.name == text })?.grant else {
                throw failure("grant", expected)
            }
            grants.insert(grant)
        }
        guard !grants.isEmpty else { throw failure("grant", expected) }
        if grants.contains(.clientCredentials), c.kind != .oauth2 {
            throw failure("grant", "client_credentials applies to oauth2 providers only; this one is \(c.kind.rawValue)")
        }
        c.grants = grants
    }
}
