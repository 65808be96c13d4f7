import Foundation

extension ProvidersFileEntry {
    /// The keys an `oidc` entry may not have: its endpoints come from the issuer's discovery document, and its user is the ID token's `sub`.
    static let oidcRefusedKeys: Set<String> = [
        "authorize_url", "token_url", "user_url", "refresh_url", "user_id_field", "user_token_param", "user_auth_scheme",
        "user_request_body", "user_introspection", "user_name_field", "token_path", "token_user_id_field",
        "token_user_name_field", "request_token_url", "access_token_url", "api_key", "api_base_url", "authenticate_url",
    ]

    /// The scopes an `oidc` entry asks for unless it says otherwise: `openid` (OIDC Core §3.1.2.1) and the
    /// standard `email` and `profile` claims (OIDC Core §5.4), so the account has a name to show.
    static let defaultOIDCScopes = ["openid", "email", "profile"]

    /// A custom OpenID Connect provider before its entry's keys apply.
    static func customOIDC(named name: String) -> ProviderConfiguration {
        ProviderConfiguration(name: name, kind: .oidc, scopes: defaultOIDCScopes)
    }

    /// For an `oidc` provider: refuses the keys the discovery document or the ID token decide, keeps the operator's
    /// own `pkce` and `token_endpoint_auth_method` over the document's, and checks the issuer and the scopes.
    ///
    /// The issuer is an `https` URL (OIDC Discovery §2), or `http` on a
    /// loopback host for a provider on the same machine; the scopes include `openid`.
    func applyOIDC(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        guard c.kind == .oidc else { return }
        if let key = settings.keys.sorted().first(where: Self.oidcRefusedKeys.contains) {
            throw failure(
                key,
                "does not apply to an oidc provider: its endpoints come from the issuer's discovery document and its user id is the ID token's sub"
            )
        }
        if settings["pkce"] != nil { c.oidcOptions.pkce = c.pkce }
        if settings["token_endpoint_auth_method"] != nil { c.oidcOptions.clientAuthentication = c.clientAuthentication }
        if let issuer = c.issuer, let problem = Self.oidcIssuerProblem(issuer) { throw failure("issuer", problem) }
        if !c.scopes.contains("openid") {
            throw failure("scopes", "an oidc provider's scopes must include openid (OIDC Core §3.1.2.1)")
        }
    }

    /// Why `issuer` cannot be an OpenID issuer identifier, or nil: `https` with a host, no query or fragment; `http` only on loopback.
    static func oidcIssuerProblem(_ issuer: String) -> String? {
        guard let url = URLComponents(string: issuer), let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil,
            url.user == nil, url.password == nil
        else { return "must be an https URL with a host and no query or fragment (OIDC Discovery §2)" }
        switch url.scheme?.lowercased() {
        case "https": return nil
        case "http" where ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased()): return nil
        default: return "must be an https URL (http only on 127.0.0.1 or localhost) (OIDC Discovery §2)"
        }
    }
}
