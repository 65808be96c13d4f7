import Foundation

extension ProvidersFileEntry {
    /// The providers-file keys of authorization server issuer identification (RFC 9207).
    static let issuerKeys: Set<String> = ["issuer", "iss_parameter_supported"]

    /// Reads `issuer` and `iss_parameter_supported` into the configuration.
    ///
    /// `issuer` is the provider's issuer identifier: an absolute http(s) URL with
    /// no query or fragment (RFC 8414 §2). `iss_parameter_supported: true` is the
    /// provider's `authorization_response_iss_parameter_supported` metadata
    /// (RFC 9207 §3) and needs `issuer`.
    func applyIssuer(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        if settings["issuer"] != nil {
            let issuer = try url("issuer")
            if let issuer, URLComponents(string: issuer)?.query != nil {
                throw failure("issuer", "must be a URL without a query (RFC 8414 §2)")
            }
            c.issuer = issuer
        }
        if let value = try bool("iss_parameter_supported") { c.requiresIssuerParameter = value }
        if c.requiresIssuerParameter, c.issuer?.isEmpty ?? true {
            throw failure("iss_parameter_supported", "needs \"issuer\", the value the provider sends as iss")
        }
    }
}
