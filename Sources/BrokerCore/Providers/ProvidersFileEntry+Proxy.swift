extension ProvidersFileEntry {
    /// Reads how the API proxy places the credential beyond the provider's kind (``ProxyCredentialPlacement``):
    /// `api_token_param` (the access token as this query parameter instead of a Bearer header; oauth2 and oidc only)
    /// and `api_client_id_header` (a header field set to the client id on every call, Twitch Helix's `Client-Id`).
    /// The fixed fields a provider wants on every call are its `request_headers`.
    func applyProxy(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        if settings["api_token_param"] != nil {
            guard c.kind == .oauth2 || c.kind == .oidc else {
                throw failure("api_token_param", "applies to oauth2 and oidc providers only; this one is \(c.kind.rawValue)")
            }
            c.apiTokenParameter = try parameterName("api_token_param")
        }
        if settings["api_client_id_header"] != nil { c.apiClientIDHeader = try clientIDHeader() }
    }

    /// `api_client_id_header`: an RFC 9110 §5.6.2 token of at most 64 bytes that names no field the broker or the
    /// transport writes (`Authorization`, `Cookie`, `Host`, framing and hop-by-hop fields) and no `Broker-*` field.
    private func clientIDHeader() throws(ProviderConfigurationError) -> String? {
        guard let name = try string("api_client_id_header") else { return nil }
        guard name.utf8.count <= 64, ProxyHeaders.isToken(name) else {
            throw failure("api_client_id_header", "must be a header name (an HTTP token of at most 64 bytes)")
        }
        let lowered = name.lowercased()
        guard !ProxyOutbound.reservedNames.contains(lowered), !Self.reservedHeaders.contains(lowered),
            !lowered.hasPrefix(ProxyHeaders.brokerPrefix)
        else { throw failure("api_client_id_header", "may not set \"\(name)\"; the broker writes it") }
        return name
    }
}
