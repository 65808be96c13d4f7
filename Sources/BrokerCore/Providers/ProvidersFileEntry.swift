import Foundation

/// One provider's settings from the providers file, checked key by key and merged over its preset.
struct ProvidersFileEntry {
    /// The provider name (the key in `providers`).
    let provider: String
    /// The raw settings object.
    let settings: [String: Any]
    /// The environment that `${NAME}` references resolve against.
    let environment: [String: String]

    /// The merged configuration; throws naming this provider and the first bad or missing key.
    func configuration() throws(ProviderConfigurationError) -> ProviderConfiguration {
        if let unknown = settings.keys.sorted().first(where: {
            !ProvidersFile.knownKeys.contains($0) && !Self.issuerKeys.contains($0) && !Self.oauth2Keys.contains($0)
                && !Self.displayKeys.contains($0) && !Self.grantKeys.contains($0)
                && !Self.lifetimeKeys.contains($0) && !Self.credentialKeys.contains($0) && !Self.mcpKeys.contains($0)
                && !Self.settingKeys.contains($0)
        }) {
            throw failure(unknown, "unknown key")
        }
        var configuration = try base()
        try apply(to: &configuration)
        try applyIssuer(to: &configuration)
        try applyDisplay(to: &configuration)
        try applyOAuth2(to: &configuration)
        try applyOIDC(to: &configuration)
        try applyMCP(to: &configuration)
        try applyGrant(to: &configuration)
        try applyLifetimes(to: &configuration)
        try applyCredentials(to: &configuration)
        try applySettings(to: &configuration)
        try checkComplete(
            configuration,
            isPreset: ProviderPresets.preset(named: provider, environment: [:]).map { $0.kind == configuration.kind } ?? false)
        return configuration
    }

    /// The preset of this name with environment credentials, or an empty custom provider of the given `kind`.
    private func base() throws(ProviderConfigurationError) -> ProviderConfiguration {
        // `auth` is the same setting as `kind`, under the name credential providers are declared with.
        let kindKey = settings["auth"] != nil && settings["kind"] == nil ? "auth" : "kind"
        if settings["auth"] != nil, settings["kind"] != nil {
            throw failure("auth", "give the kind once, as \"auth\" or as \"kind\"")
        }
        let kindName = try string(kindKey)
        let kind: ProviderKind?
        if let kindName {
            guard let parsed = ProviderKind(rawValue: kindName) else {
                // Quote the file's text, not what a ${NAME} in it resolved to: that may be a secret.
                let written = settings[kindKey] as? String ?? kindName
                throw failure(kindKey, "unknown kind \"\(written)\"; expected \(ProviderKind.spelledOut)")
            }
            kind = parsed
        } else {
            kind = nil
        }
        // An entry that names endpoints, or says oauth2, keeps a preset's documented endpoints rather than its issuer's
        // document (Microsoft with a tenant id), as before presets read discovery documents.
        let staticEndpoints = kind == .oauth2 || settings.keys.contains(where: Self.oidcRefusedKeys.contains)
        // A name the API-key catalogue took after a file used it for a provider of another kind stays the file's own
        // custom provider, so that file keeps loading.
        if let preset = ProviderPresets.preset(named: provider, environment: environment, staticEndpoints: staticEndpoints),
            kind == nil || kind == preset.kind || !ProviderPresets.credentialCatalogue.contains(where: { $0.name == provider })
        {
            if let kind, kind != preset.kind {
                throw failure(kindKey, "the \(provider) preset is \(preset.kind.rawValue); a preset's kind cannot change")
            }
            return preset
        }
        guard let kind else {
            throw failure("kind", "missing; a custom provider needs \"kind\" (or \"auth\"): \(ProviderKind.spelledOut)")
        }
        if kind == .oidc { return Self.customOIDC(named: provider) }
        if kind == .mcp { return Self.customMCP(named: provider) }
        if let scheme = CredentialScheme.defaults(for: kind) {
            // Entered credentials: no sign-in and no client credentials grant, so no OAuth setting is needed.
            var c = ProviderConfiguration(name: provider, kind: kind)
            c.grants = []
            c.credentials = scheme
            return c
        }
        return ProviderConfiguration(name: provider, kind: kind, userIDFields: ["id"])
    }

    /// Overrides every field whose key the entry has.
    private func apply(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        if settings["client_id"] != nil { c.clientID = try string("client_id") }
        if settings["client_secret"] != nil { c.clientSecret = try string("client_secret").map(Secret.init) }
        if settings["api_key"] != nil { c.apiKey = try string("api_key").map(Secret.init) }
        if settings["authorize_url"] != nil { c.authorizeURL = try url("authorize_url") }
        if settings["token_url"] != nil { c.tokenURL = try url("token_url") }
        if settings["user_url"] != nil { c.userURL = try url("user_url") }
        if settings["revoke_url"] != nil { c.revokeURL = try url("revoke_url") }
        if settings["request_token_url"] != nil { c.requestTokenURL = try url("request_token_url") }
        if settings["access_token_url"] != nil { c.accessTokenURL = try url("access_token_url") }
        if let value = try bool("api_allow_private") { c.apiAllowPrivate = value }
        if settings["api_base_url"] != nil { c.apiBaseURL = try apiBaseURL(kind: c.kind, allowingHTTP: c.apiAllowPrivate) }
        try applyProxy(to: &c)
        if settings["authenticate_url"] != nil { c.authenticateURL = try url("authenticate_url") }
        if settings["user_id_field"] != nil {
            c.userIDFields = try paths("user_id_field") ?? []
            if c.kind != .oauth2, c.userIDFields.count > 1 {
                throw failure("user_id_field", "an \(c.kind.rawValue) provider reads one field; several joined into one id are for oauth2")
            }
        }
        if settings["user_token_param"] != nil { c.userTokenParameter = try parameterName("user_token_param") }
        if settings["revoke_token_param"] != nil { c.revokeTokenParameter = try parameterName("revoke_token_param") ?? "token" }
        if settings["revoke_client_auth"] != nil { try applyRevokeClientAuth(to: &c) }
        if let value = try bool("pkce") { c.pkce = value }
        if settings["scopes"] != nil { c.scopes = try scopes() }
        if settings["allowed_scopes"] != nil { c.allowedScopes = try scopes(key: "allowed_scopes") }
        if settings["scope_upgrade"] != nil { c.scopeUpgrade = try scopeUpgrade() }
        if settings["scope_separator"] != nil { c.scopeSeparator = try string("scope_separator") ?? " " }
        if settings["authorize_params"] != nil { c.extraAuthorizeParameters = try authorizeParameters() }
        if let method = try string("token_endpoint_auth_method") {
            guard let parsed = ClientAuthentication(rawValue: method), parsed != .publicClient else {
                throw failure("token_endpoint_auth_method", "expected client_secret_post or client_secret_basic")
            }
            c.clientAuthentication = parsed
        }
    }

    /// `api_base_url`: TMDB's as any http(s) URL, as before; for the other kinds the base the API proxy joins a caller's
    /// path to (issue 31), so an `https://` URL without userinfo, query or fragment, with an optional path prefix
    /// (`http://` only for a provider the file lets the proxy reach on a private address, `api_allow_private`).
    private func apiBaseURL(kind: ProviderKind, allowingHTTP: Bool) throws(ProviderConfigurationError) -> String? {
        guard let text = try url("api_base_url") else { return nil }
        guard kind != .tmdb else { return text }
        do throws(ProxyTarget.Failure) {
            _ = try ProxyTarget.Base(withSampleSettings(text), allowingHTTP: allowingHTTP)
        } catch {
            switch error {
            case .invalidBase(let reason), .refused(let reason): throw failure("api_base_url", reason)
            }
        }
        return text
    }

    /// A provider named in the file must be usable: every setting its kind needs is present after merging.
    private func checkComplete(_ c: ProviderConfiguration, isPreset: Bool) throws(ProviderConfigurationError) {
        if let missing = c.missingSettingKeys.first {
            if let variable = c.settingNames[missing] {
                throw failure(missing, "missing: set \(variable) or give \"\(missing)\"")
            }
            throw failure(missing, "missing; a custom \(c.kind.rawValue) provider needs it")
        }
        // A custom OAuth 2.0 provider cannot be assumed to put the user id in its token response unless it says where.
        if !isPreset, c.kind == .oauth2, c.grants.contains(.authorizationCode), c.userURL == nil,
            c.tokenAnswer.userIDFields?.isEmpty ?? true
        {
            throw failure("user_url", "missing; a custom oauth2 provider needs the endpoint that names the user, or token_user_id_field")
        }
    }

    /// An error naming this provider and `key`.
    func failure(_ key: String, _ message: String) -> ProviderConfigurationError {
        ProviderConfigurationError(provider: provider, key: key, message: message)
    }
}
