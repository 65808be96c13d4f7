/// What an OpenID Connect provider must have before anything is fetched: the client credentials and the issuer.
///
/// The endpoints come later, from the issuer's discovery document
/// (``OIDCProviderMetadata``); ``oauth2Configuration(with:)`` merges the two
/// into the OAuth 2.0 configuration the code exchange, refresh and revocation run on.
struct OIDCSettings: ProviderKindSettings, Sendable {
    /// The provider as configured, endpoints absent.
    let provider: ProviderConfiguration
    /// The client id, compared with the ID token's `aud` and `azp`.
    let clientID: String
    /// The issuer identifier, compared byte for byte with the document's and the ID token's `iss`.
    let issuer: String

    /// Reads `provider` through `required`: `client_id`, `client_secret` and `issuer`.
    init(_ provider: ProviderConfiguration, reading required: inout RequiredSettings) {
        self.provider = provider
        clientID = required.text("client_id", provider.clientID)
        _ = required.secret("client_secret", provider.clientSecret)
        issuer = required.text("issuer", provider.issuer)
    }

    /// The OAuth 2.0 configuration of this provider with `metadata`'s endpoints, or why the two cannot work together.
    ///
    /// The user id is the ID token's `sub` (OIDC Core §2), never a field of the
    /// token answer; a preset with ``OIDCOptions/userFromUserEndpoint`` keeps its own user endpoint instead. Client authentication and PKCE follow the operator's
    /// ``OIDCOptions`` when set, else the document: `client_secret_post` when
    /// it is listed (the form carries the secret without the encoding step
    /// RFC 6749 §2.3.1 adds to Basic, which servers decode inconsistently), else
    /// `client_secret_basic`, the default when the list is absent (OIDC
    /// Discovery §3); PKCE S256 when `code_challenge_methods_supported` lists it (RFC 8414 §2). A document saying
    /// `authorization_response_iss_parameter_supported` makes a callback without `iss` refused (RFC 9207 §2.4).
    func oauth2Configuration(with metadata: OIDCProviderMetadata) throws(BrokerError) -> ProviderConfiguration {
        var c = provider
        c.kind = .oauth2
        c.authorizeURL = metadata.authorizationEndpoint
        c.tokenURL = metadata.tokenEndpoint
        if !provider.oidcOptions.userFromUserEndpoint {
            c.userURL = metadata.userinfoEndpoint
            c.userIDFields = ["sub"]
            c.userTokenParameter = nil
        }
        c.tokenAnswer.userIDFields = []
        c.revokeURL = provider.revokeURL ?? metadata.revocationEndpoint
        c.issuer = issuer
        c.requiresIssuerParameter = provider.requiresIssuerParameter || metadata.sendsIssuerParameter
        if let chosen = provider.oidcOptions.clientAuthentication {
            c.clientAuthentication = chosen
        } else if let methods = metadata.tokenEndpointAuthMethods {
            if methods.contains(ClientAuthentication.clientSecretPost.rawValue) {
                c.clientAuthentication = .clientSecretPost
            } else if methods.contains(ClientAuthentication.clientSecretBasic.rawValue) {
                c.clientAuthentication = .clientSecretBasic
            } else {
                throw .providerUnavailable(
                    provider.name,
                    reason: "the issuer offers neither client_secret_post nor client_secret_basic at its token endpoint")
            }
        } else {
            c.clientAuthentication = .clientSecretBasic
        }
        c.pkce = provider.oidcOptions.pkce ?? (metadata.codeChallengeMethods?.contains(PKCE.method) ?? false)
        return c
    }
}

extension ProviderConfiguration {
    /// This `oidc` provider as the OAuth 2.0 provider its discovery document `metadata` makes it, for embedders and
    /// tests that hold a document; throws what the broker would (a missing setting, a document it cannot work with).
    public func oauth2Configuration(discovered metadata: OIDCProviderMetadata) throws(BrokerError) -> ProviderConfiguration {
        try OIDCSettings(self).oauth2Configuration(with: metadata)
    }
}
