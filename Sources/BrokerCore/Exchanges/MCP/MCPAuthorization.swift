/// Everything discovery found for one remote MCP server: its authorization server's checked metadata and the client
/// the broker signs in as; what the ``MCPExchange`` runs the OAuth 2.0 flow on.
public struct MCPAuthorization: Sendable, Equatable {
    /// How the broker came to be a client of the authorization server (MCP authorization, client registration).
    public enum ClientSource: String, Sendable, Equatable {
        /// The providers file gave `client_id` (and maybe `client_secret`).
        case preRegistered = "pre_registered"
        /// The client id is the URL of the broker's client ID metadata document.
        case metadataDocument = "metadata_document"
        /// Dynamic client registration (RFC 7591), kept in the store.
        case dynamic
    }

    /// The server URL, the `resource` of every request (RFC 8707 §2).
    public var server: String
    /// The authorization server's checked metadata (RFC 8414; issuer, endpoints, methods).
    public var metadata: OIDCProviderMetadata
    /// `registration_endpoint` (RFC 8414 §2), when offered.
    public var registrationEndpoint: String?
    /// `client_id_metadata_document_supported`.
    public var supportsClientMetadataDocument: Bool
    /// The scopes to ask for when the providers file names none: the challenge's `scope`, else the protected resource
    /// metadata's `scopes_supported`, else none (MCP authorization, scope selection).
    public var scopes: [String]
    /// The client id.
    public var clientID: String
    /// The client secret, when one was issued or configured.
    public var clientSecret: Secret?
    /// How the client authenticates at the token endpoint.
    public var authentication: ClientAuthentication
    /// Where the client came from.
    public var clientSource: ClientSource

    /// `provider` as the OAuth 2.0 provider this authorization makes it: the discovered endpoints, the client, PKCE,
    /// and `resource=<server>` on the authorize and every token request (RFC 8707 §2).
    func oauth2Configuration(of provider: ProviderConfiguration) -> ProviderConfiguration {
        var c = provider
        c.kind = .oauth2
        c.authorizeURL = metadata.authorizationEndpoint
        c.tokenURL = metadata.tokenEndpoint
        c.revokeURL = metadata.revocationEndpoint
        c.userURL = nil
        c.issuer = metadata.issuer
        c.requiresIssuerParameter = metadata.sendsIssuerParameter
        c.clientID = clientID
        c.clientSecret = clientSecret
        c.clientAuthentication = authentication
        c.pkce = true
        // The endpoints came from the internet: reach them on public addresses only unless the entry allows private ones.
        c.tokenEndpointPublicOnly = !provider.apiAllowPrivate
        if c.scopes.isEmpty { c.scopes = scopes }
        c.extraAuthorizeParameters.removeAll { $0.0 == "resource" }
        c.extraAuthorizeParameters.append(("resource", server))
        c.extraTokenParameters.removeAll { $0.0 == "resource" }
        c.extraTokenParameters.append(("resource", server))
        return c
    }
}
