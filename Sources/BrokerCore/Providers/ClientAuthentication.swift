/// How the broker authenticates itself at a provider's token endpoint (RFC 6749 §2.3.1).
///
/// The raw values are the OpenID Connect `token_endpoint_auth_method` names, as the providers file spells them.
public enum ClientAuthentication: String, Sendable, CaseIterable {
    /// `client_id` and `client_secret` in the form body.
    case clientSecretPost = "client_secret_post"
    /// `Authorization: Basic` with the form-encoded id and secret.
    case clientSecretBasic = "client_secret_basic"
}
