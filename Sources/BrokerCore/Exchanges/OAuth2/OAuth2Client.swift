import BrokerCrypto
import Foundation

/// Talks OAuth 2.0 to one provider: builds the authorize URL, exchanges the code, names the user, revokes.
///
/// Every provider answer goes through ``OAuth2ResponseValidator``; errors name
/// the failed check and, by construction, never carry the code, the verifier,
/// the client secret or a token.
public struct OAuth2Client: Sendable {
    /// The provider this client talks to.
    public let provider: ProviderConfiguration
    /// The fixed redirect URI, sent byte for byte in the authorize URL and the token request (RFC 6749 §4.1.3).
    public let redirectURI: String
    /// The outbound client.
    let upstream: any UpstreamClient

    /// Creates a client for `provider` that redirects back to `redirectURI` and calls out through `upstream`.
    public init(provider: ProviderConfiguration, redirectURI: String, upstream: any UpstreamClient) {
        self.provider = provider
        self.redirectURI = redirectURI
        self.upstream = upstream
    }

    /// The URL to send the browser to: `client_id`, `redirect_uri`, `response_type=code`, scope, state, PKCE, extra parameters.
    ///
    /// RFC 6749 §4.1.1 for the parameters; RFC 7636 §4.3 for `code_challenge`
    /// with `code_challenge_method=S256` (never `plain`, RFC 9700 §2.1.1).
    public func authorizeURL(state: String, codeChallenge: String?) -> String {
        var pairs: [(String, String)] = [
            ("client_id", provider.clientID ?? ""),
            ("redirect_uri", redirectURI),
            ("response_type", "code"),
        ]
        if !provider.scopes.isEmpty {
            pairs.append(("scope", provider.scopes.joined(separator: provider.scopeSeparator)))
        }
        pairs.append(("state", state))
        if let codeChallenge {
            pairs.append(("code_challenge", codeChallenge))
            pairs.append(("code_challenge_method", PKCE.method))
        }
        pairs.append(contentsOf: provider.extraAuthorizeParameters)
        return FormEncoding.url(provider.authorizeURL ?? "", adding: pairs)
    }

    /// Exchanges an authorization code for tokens with a form POST (RFC 6749 §4.1.3), asking for JSON.
    ///
    /// The client authenticates with `client_secret_post` or HTTP Basic
    /// (RFC 6749 §2.3.1); `code_verifier` is sent when the flow used PKCE.
    public func exchange(code: String, codeVerifier: String?) async throws(BrokerError) -> TokenGrant {
        let step = ProviderStep.tokenExchange
        guard let tokenURL = provider.tokenURL else { throw ProviderCall.notConfigured(provider, "token_url") }
        var form: [(String, String)] = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirectURI),
        ]
        if let codeVerifier { form.append(("code_verifier", codeVerifier)) }
        var headers: [(String, String)] = [
            ("Content-Type", "application/x-www-form-urlencoded"),
            // GitHub answers form-encoded unless asked for JSON.
            ("Accept", "application/json"),
            ("User-Agent", ProviderCall.userAgent),
        ]
        addClientAuthentication(form: &form, headers: &headers)
        let request = UpstreamRequest(method: "POST", url: tokenURL, headers: headers, body: FormEncoding.body(form))
        let sensitive = [code, codeVerifier, provider.clientSecret?.value].compactMap { $0 }
        return try await call.perform(request, step: step, secrets: sensitive) { response throws(BrokerError) in
            try OAuth2ResponseValidator.tokenGrant(from: response, step: step.rawValue)
        }
    }

    /// Adds the client credentials the provider's ``ClientAuthentication`` asks for.
    func addClientAuthentication(form: inout [(String, String)], headers: inout [(String, String)]) {
        let id = provider.clientID ?? ""
        let secret = provider.clientSecret?.value ?? ""
        switch provider.clientAuthentication {
        case .clientSecretPost:
            form.append(("client_id", id))
            form.append(("client_secret", secret))
        case .clientSecretBasic:
            // RFC 6749 §2.3.1: the id and secret are form-encoded before they are joined and base64-encoded.
            let credentials = PercentEncoding.rfc3986(id) + ":" + PercentEncoding.rfc3986(secret)
            headers.append(("Authorization", "Basic " + Base64.encode(Array(credentials.utf8))))
        }
    }

    /// The shared sending, step naming and redaction of provider calls.
    var call: ProviderCall { ProviderCall(upstream: upstream) }
}
