/// What an `oidc` provider has beyond its issuer and client: choices the operator took from the discovery
/// document, and what a preset knows of its provider's ID tokens.
public struct OIDCOptions: Sendable, Equatable {
    /// The client authentication at the token endpoint (`token_endpoint_auth_method` in the providers file); nil follows the document.
    public var clientAuthentication: ClientAuthentication?
    /// Whether to send a PKCE S256 challenge (`pkce` in the providers file); nil follows the document.
    public var pkce: Bool?
    /// Other `iss` values this provider's ID tokens are known to carry besides the issuer: Google documents
    /// `accounts.google.com` beside `https://accounts.google.com`. Set by presets only.
    public var idTokenIssuerAliases: [String]
    /// Whether the account is named by the provider's user endpoint (its `user_url` and `user_id_field`) rather than
    /// the ID token's `sub`, which is then only checked. Microsoft's `sub` is pairwise per application and differs
    /// from the Graph `id` its accounts were keyed by before its preset read discovery documents. Set by presets only.
    public var userFromUserEndpoint = false

    /// Creates options; the choices default to following the document, and there are no aliases.
    public init(clientAuthentication: ClientAuthentication? = nil, pkce: Bool? = nil, idTokenIssuerAliases: [String] = []) {
        self.clientAuthentication = clientAuthentication
        self.pkce = pkce
        self.idTokenIssuerAliases = idTokenIssuerAliases
    }
}
