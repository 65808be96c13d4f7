/// What the client credentials grant needs of a provider: the client id and secret and the token endpoint, never absent here.
///
/// A machine-to-machine providers-file entry has only these (RFC 6749 §4.4:
/// the client asks for a token on its own behalf, so there is no authorize
/// endpoint, redirect or user).
public struct ClientCredentialsSettings: ProviderKindSettings, Sendable {
    /// The provider key.
    public let name: String
    /// The client credentials and how they reach the token endpoint (RFC 6749 §2.3.1).
    public let credentials: OAuth2Settings.Credentials
    /// The token endpoint.
    public let tokenURL: String
    /// How the token endpoint wants its body.
    public let tokenRequestFormat: ProviderRequestFormat
    /// Where the token answer keeps the token.
    public let tokenAnswer: TokenAnswerLayout
    /// The scopes asked for when the caller names none.
    public let scopes: [String]
    /// What joins the scopes in the request (RFC 6749 §3.3: a space).
    public let scopeSeparator: String
    /// Header fields added to every call to the provider.
    public let requestHeaders: [(String, String)]

    /// Reads `provider` through `required`: `client_id`, `client_secret` and `token_url` are required.
    package init(_ provider: ProviderConfiguration, reading required: inout RequiredSettings) {
        credentials = OAuth2Settings.Credentials(
            id: required.text("client_id", provider.clientID),
            secret: required.secret("client_secret", provider.clientSecret),
            authentication: provider.clientAuthentication)
        tokenURL = required.text("token_url", provider.tokenURL)
        name = provider.name
        tokenRequestFormat = provider.tokenRequestFormat
        tokenAnswer = provider.tokenAnswer
        scopes = provider.scopes
        scopeSeparator = provider.scopeSeparator
        requestHeaders = provider.requestHeaders
    }
}
