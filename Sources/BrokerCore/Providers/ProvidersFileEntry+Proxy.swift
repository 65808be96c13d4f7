extension ProvidersFileEntry {
    /// Reads how the API proxy places the credential beyond the provider's kind (``ProxyCredentialPlacement``):
    /// `api_token_param` (the access token as this query parameter instead of a Bearer header; oauth2 and oidc only)
    /// `api_token_header` with `api_token_format` (the access token in this header field, the value a format holding
    /// `{access_token}` once; Shopify's `X-Shopify-Access-Token`; oauth2 and oidc only) and `api_client_id_header`
    /// (a header field set to the client id on every call, Twitch Helix's `Client-Id`).
    /// The fixed fields a provider wants on every call are its `request_headers`.
    func applyProxy(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        if settings["api_token_param"] != nil {
            guard c.kind == .oauth2 || c.kind == .oidc else {
                throw failure("api_token_param", "applies to oauth2 and oidc providers only; this one is \(c.kind.rawValue)")
            }
            c.apiTokenParameter = try parameterName("api_token_param")
            c.apiTokenHeader = nil
        }
        if settings["api_token_header"] != nil || settings["api_token_format"] != nil {
            let key = settings["api_token_header"] != nil ? "api_token_header" : "api_token_format"
            guard c.kind == .oauth2 || c.kind == .oidc else {
                throw failure(key, "applies to oauth2 and oidc providers only; this one is \(c.kind.rawValue)")
            }
            guard settings["api_token_param"] == nil else {
                throw failure(key, "give api_token_param or api_token_header, not both")
            }
            c.apiTokenParameter = nil
            c.apiTokenHeader = try tokenHeader(default: c.apiTokenHeader)
            // The user endpoint is on the same API and takes the token the same way, unless user_auth_scheme says how.
            if settings["user_auth_scheme"] == nil { c.userRequest.tokenHeader = c.apiTokenHeader }
        }
        if settings["api_client_id_header"] != nil { c.apiClientIDHeader = try clientIDHeader() }
        if let header = c.apiTokenHeader, header.name.lowercased() == c.apiClientIDHeader?.lowercased() {
            throw failure("api_client_id_header", "names the field api_token_header carries the token in")
        }
    }

    /// `api_token_header` (default `Authorization`, or the preset's) and `api_token_format` (default `{access_token}`
    /// for another field, `Bearer {access_token}` for `Authorization`): the header is an RFC 9110 §5.6.2 token of at
    /// most 64 bytes that names no field the transport or the broker writes; the format is one line of at most 256
    /// bytes holding `{access_token}` exactly once, so the field carries the token and nothing can split it.
    private func tokenHeader(default preset: APITokenHeader?) throws(ProviderConfigurationError) -> APITokenHeader? {
        var name = preset?.name ?? "Authorization"
        if let given = try string("api_token_header") {
            let lowered = given.lowercased()
            guard given.utf8.count <= 64, ProxyHeaders.isToken(given) else {
                throw failure("api_token_header", "must be a header name (an HTTP token of at most 64 bytes)")
            }
            guard
                lowered == "authorization"
                    || (!ProxyOutbound.reservedNames.contains(lowered) && !Self.reservedHeaders.contains(lowered)
                        && !lowered.hasPrefix(ProxyHeaders.brokerPrefix))
            else { throw failure("api_token_header", "may not set \"\(given)\"; the broker or the transport writes it") }
            name = given
        }
        let isAuthorization = name.lowercased() == "authorization"
        var format =
            settings["api_token_header"] == nil ? preset?.format : (isAuthorization ? "Bearer " : "") + APITokenHeader.placeholder
        if let given = try string("api_token_format") {
            guard given.components(separatedBy: APITokenHeader.placeholder).count == 2 else {
                throw failure("api_token_format", "must hold {access_token} exactly once")
            }
            guard given.utf8.count <= 256, !given.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw failure("api_token_format", "must be one line of at most 256 bytes")
            }
            format = given
        }
        let header = APITokenHeader(name: name, format: format ?? "Bearer " + APITokenHeader.placeholder)
        // Authorization: Bearer {access_token} is the default placement; keep it as such.
        return isAuthorization && header.format == "Bearer " + APITokenHeader.placeholder ? nil : header
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
