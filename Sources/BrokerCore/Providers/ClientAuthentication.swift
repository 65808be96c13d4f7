/// How the broker authenticates itself at a provider's token endpoint (RFC 6749 §2.3.1).
///
/// The raw values are the OpenID Connect `token_endpoint_auth_method` names, as the providers file spells them.
public enum ClientAuthentication: String, Sendable, CaseIterable {
    /// `client_id` and `client_secret` in the form body.
    case clientSecretPost = "client_secret_post"
    /// `Authorization: Basic` with the form-encoded id and secret.
    case clientSecretBasic = "client_secret_basic"
    /// A public client (RFC 7591 §2 `none`): `client_id` in the form body and no secret; what a remote MCP server's
    /// authorization server registers the broker as when it issues no secret.
    case publicClient = "none"
}
