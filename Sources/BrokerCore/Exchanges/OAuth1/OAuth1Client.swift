import Foundation

/// Talks OAuth 1.0a to one provider: temporary credentials, the authorize URL, token credentials, the user.
///
/// Every request is signed with HMAC-SHA1 by ``OAuth1Signer``; nonce and timestamp
/// come from injected closures. Errors name the failed check and never carry the
/// consumer secret, a token secret, the verifier or a provider's body.
public struct OAuth1Client: Sendable {
    /// The settings of the provider this client talks to.
    public let settings: OAuth1Settings
    /// The shared sending, step naming, redaction and reporting of provider calls.
    let call: ProviderCall
    /// Makes the `oauth_nonce` of each request.
    let nonce: @Sendable () -> String
    /// Makes the `oauth_timestamp` of each request, in seconds since 1970.
    let timestamp: @Sendable () -> Int

    /// Creates a client; `timestamp` is the injected clock in Unix seconds, `nonce` defaults to 160 random bits.
    public init(
        settings: OAuth1Settings,
        upstream: any UpstreamClient,
        nonce: @escaping @Sendable () -> String = { OAuth1Signer.randomNonce() },
        timestamp: @escaping @Sendable () -> Int
    ) {
        self.init(settings: settings, call: ProviderCall(upstream: upstream), nonce: nonce, timestamp: timestamp)
    }

    /// Creates a client whose calls go through `call` (an exchange's, which reports them).
    init(
        settings: OAuth1Settings, call: ProviderCall, nonce: @escaping @Sendable () -> String = { OAuth1Signer.randomNonce() },
        timestamp: @escaping @Sendable () -> Int
    ) {
        self.settings = settings
        self.call = call
        self.nonce = nonce
        self.timestamp = timestamp
    }

    /// Asks for temporary credentials with a signed `POST request_token` carrying `oauth_callback`.
    ///
    /// RFC 5849 §2.1: the answer must hold `oauth_token`, `oauth_token_secret` and
    /// `oauth_callback_confirmed=true`; without the confirmation the flow is aborted
    /// rather than downgraded to OAuth 1.0 (session fixation, Security Advisory 2009.1).
    public func requestTemporaryCredentials(callback: String) async throws(BrokerError) -> (token: String, secret: Secret) {
        let step = ProviderStep.requestToken
        let url = settings.requestTokenURL
        let header = signer(token: nil, tokenSecret: nil)
            .authorizationHeader(method: "POST", url: url, extraOAuthParameters: [("oauth_callback", callback)])
        let request = UpstreamRequest(
            method: "POST", url: url, headers: [("Authorization", header), ("User-Agent", ProviderCall.userAgent)])
        let fields = try await call.perform(request, step: step, secrets: sensitive()) { response throws(BrokerError) in
            try Self.formFields(of: response, step: step.rawValue)
        }
        guard fields["oauth_callback_confirmed"] == "true" else {
            throw .upstreamError(step: step.rawValue, reason: "oauth_callback_confirmed is not true")
        }
        guard let token = fields["oauth_token"], ProviderCall.isUsableToken(token) else {
            throw .upstreamError(step: step.rawValue, reason: "the response has no usable oauth_token")
        }
        guard let secret = fields["oauth_token_secret"], !secret.isEmpty else {
            throw .upstreamError(step: step.rawValue, reason: "the response has no oauth_token_secret")
        }
        // The pending flow keeps this secret; a store without a key writes it as it is and reads a value
        // that starts with the sealed prefix as sealed, so such a secret could not be read back.
        guard !secret.hasPrefix(PendingFlowCodec.sealedPrefix) else {
            throw .upstreamError(step: step.rawValue, reason: "oauth_token_secret has the form of a sealed value")
        }
        return (token, Secret(secret))
    }

    /// Where to send the browser: `authenticate_url` when set ("Sign in with Twitter"), else `authorize_url`, plus `oauth_token`.
    ///
    /// RFC 5849 §2.2: only the temporary token goes here, never `oauth_callback`.
    public func authorizeURL(requestToken: String) -> String {
        FormEncoding.url(settings.authenticateURL ?? settings.authorizeURL, adding: [("oauth_token", requestToken)])
    }

    /// Exchanges the verifier for token credentials with a signed `POST access_token` (RFC 5849 §2.3).
    ///
    /// The request is signed with the temporary token and its secret. The answer is
    /// form-encoded even when labelled `text/html`; `user_id` and `screen_name` are
    /// Twitter's additions and land in the grant's `uid` and `screenName`.
    public func requestTokenCredentials(requestToken: String, requestTokenSecret: Secret, verifier: String) async throws(BrokerError)
        -> TokenGrant
    {
        let step = ProviderStep.accessToken
        let url = settings.accessTokenURL
        let header = signer(token: requestToken, tokenSecret: requestTokenSecret.value)
            .authorizationHeader(method: "POST", url: url, extraOAuthParameters: [("oauth_verifier", verifier)])
        let request = UpstreamRequest(
            method: "POST", url: url, headers: [("Authorization", header), ("User-Agent", ProviderCall.userAgent)])
        let fields = try await call.perform(request, step: step, secrets: sensitive(requestToken, requestTokenSecret.value, verifier)) {
            response throws(BrokerError) in try Self.formFields(of: response, step: step.rawValue)
        }
        guard let token = fields["oauth_token"], !token.isEmpty else {
            throw .upstreamError(step: step.rawValue, reason: "the response has no oauth_token")
        }
        guard let secret = fields["oauth_token_secret"], !secret.isEmpty else {
            throw .upstreamError(step: step.rawValue, reason: "the response has no oauth_token_secret")
        }
        try OAuth2ResponseValidator.checkToken(token, field: "oauth_token", step: step.rawValue)
        try OAuth2ResponseValidator.checkToken(secret, field: "oauth_token_secret", step: step.rawValue)
        return TokenGrant(
            accessToken: Secret(token),
            tokenSecret: Secret(secret),
            uid: fields["user_id"].flatMap { $0.isEmpty ? nil : $0 },
            screenName: ProviderValue.displayName(fields["screen_name"])
        )
    }

    /// A signer with the consumer credentials and, when given, a token and its secret.
    func signer(token: String?, tokenSecret: String?) -> OAuth1Signer {
        let credentials = OAuth1Credentials(
            consumerKey: settings.consumerKey, consumerSecret: settings.consumerSecret.value,
            token: token, tokenSecret: tokenSecret)
        return OAuth1Signer(credentials: credentials, nonce: nonce, timestamp: timestamp)
    }

    /// The consumer secret plus `values`: what an error reason must never repeat.
    func sensitive(_ values: String...) -> [String] {
        [settings.consumerSecret.value] + values
    }
}
