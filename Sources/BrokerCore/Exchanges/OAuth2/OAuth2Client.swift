import BrokerCrypto
import Foundation

/// Talks OAuth 2.0 to one provider: builds the authorize URL, exchanges the code, names the user, revokes.
///
/// Every provider answer goes through ``OAuth2ResponseValidator``; errors name
/// the failed check and, by construction, never carry the code, the verifier,
/// the client secret or a token.
public struct OAuth2Client: Sendable {
    /// The settings of the provider this client talks to.
    public let settings: OAuth2Settings
    /// The fixed redirect URI, sent byte for byte in the authorize URL and the token request (RFC 6749 §4.1.3).
    public let redirectURI: String
    /// The shared sending, step naming, redaction and reporting of provider calls.
    let call: ProviderCall

    /// Creates a client for the provider `settings` describe that redirects back to `redirectURI` and calls out through `upstream`.
    public init(settings: OAuth2Settings, redirectURI: String, upstream: any UpstreamClient) {
        self.init(settings: settings, redirectURI: redirectURI, call: ProviderCall(upstream: upstream, provider: settings.name))
    }

    /// Creates a client whose calls go through `call` (an exchange's, which reports them).
    init(settings: OAuth2Settings, redirectURI: String, call: ProviderCall) {
        self.settings = settings
        self.redirectURI = redirectURI
        self.call = call
    }

    /// The URL to send the browser to: `client_id`, `redirect_uri`, `response_type=code`, scope (as the provider names it), state, PKCE, extra parameters.
    ///
    /// RFC 6749 §4.1.1 for the parameters; RFC 7636 §4.3 for `code_challenge`
    /// with `code_challenge_method=S256` (never `plain`, RFC 9700 §2.1.1).
    public func authorizeURL(state: String, codeChallenge: String?) -> String {
        var pairs: [(String, String)] = [
            ("client_id", settings.credentials.id),
            ("redirect_uri", redirectURI),
            ("response_type", "code"),
        ]
        if !settings.scopes.isEmpty {
            pairs.append((settings.scopeParameter, settings.scopes.joined(separator: settings.scopeSeparator)))
        }
        pairs.append(("state", state))
        if let codeChallenge {
            pairs.append(("code_challenge", codeChallenge))
            pairs.append(("code_challenge_method", PKCE.method))
        }
        pairs.append(contentsOf: settings.extraAuthorizeParameters)
        return FormEncoding.url(settings.authorizeURL, adding: pairs)
    }

    /// Exchanges an authorization code for tokens with a POST (RFC 6749 §4.1.3), asking for JSON.
    ///
    /// The client authenticates with `client_secret_post` or HTTP Basic
    /// (RFC 6749 §2.3.1); `code_verifier` is sent when the flow used PKCE. The
    /// body is a form, or the same parameters as a JSON object where the provider wants that.
    public func exchange(code: String, codeVerifier: String?) async throws(BrokerError) -> TokenGrant {
        try await exchange(code: code, codeVerifier: codeVerifier) { _ throws(BrokerError) in () }.grant
    }

    /// Exchanges the code like ``exchange(code:codeVerifier:)`` and hands the answer's fields to `extra` too
    /// (OpenID Connect reads the `id_token` there); what `extra` throws fails the exchange like any check.
    func exchange<Extra>(
        code: String, codeVerifier: String?, reading extra: ([String: Any]) throws(BrokerError) -> Extra
    ) async throws(BrokerError) -> (grant: TokenGrant, extra: Extra) {
        let step = ProviderStep.tokenExchange
        var form: [(String, String)] = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirectURI),
        ]
        if let codeVerifier { form.append(("code_verifier", codeVerifier)) }
        let request = tokenRequest(url: settings.tokenURL, form: form)
        let sensitive = [code, codeVerifier, settings.credentials.secret.value].compactMap { $0 }
        let layout = settings.tokenAnswer
        return try await call.perform(request, step: step, secrets: sensitive) { response throws(BrokerError) in
            let grant = try OAuth2ResponseValidator.tokenGrant(from: response, step: step.rawValue, layout: layout)
            return (grant, try extra(ResponseBody(response.body).fields(acceptForm: true) ?? [:]))
        }
    }

    /// A POST of `form` and the client credentials to `url`, in the provider's request format, asking for JSON.
    func tokenRequest(url: String, form: [(String, String)]) -> UpstreamRequest {
        var form = form + settings.extraTokenParameters
        var headers: [(String, String)] = [
            ("Content-Type", settings.tokenRequestFormat.contentType),
            // GitHub answers form-encoded unless asked for JSON.
            ("Accept", "application/json"),
            ("User-Agent", ProviderCall.userAgent),
        ]
        settings.credentials.add(to: &form, headers: &headers)
        var request = UpstreamRequest(
            method: "POST", url: url, headers: settings.headers(headers), body: settings.tokenRequestFormat.body(form))
        request.publicAddressesOnly = settings.tokenEndpointPublicOnly
        return request
    }

    /// Revokes the account's grant at the provider; does nothing when the provider has no revoke endpoint.
    ///
    /// ``OAuth2Revocation/revoke(_:through:)`` builds the request (RFC 7009 §2.1).
    public func revoke(account: Account) async throws(BrokerError) {
        try await settings.revocation?.revoke(account, through: call)
    }
}
