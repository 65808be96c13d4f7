/// What an operator fixed for an `oidc` provider that its discovery document would otherwise decide; nil follows the document.
public struct OIDCOverrides: Sendable, Equatable {
    /// The client authentication at the token endpoint (`token_endpoint_auth_method` in the providers file).
    public var clientAuthentication: ClientAuthentication?
    /// Whether to send a PKCE S256 challenge (`pkce` in the providers file).
    public var pkce: Bool?

    /// Creates overrides; both default to following the document.
    public init(clientAuthentication: ClientAuthentication? = nil, pkce: Bool? = nil) {
        self.clientAuthentication = clientAuthentication
        self.pkce = pkce
    }
}
