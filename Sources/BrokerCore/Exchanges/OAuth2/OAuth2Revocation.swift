/// An OAuth 2.0 provider's revocation endpoint and how to call it (RFC 7009 §2.1, and the shapes providers use instead).
///
/// Kept apart from the rest of ``OAuth2Settings`` because it is the one call
/// an account may need after its provider lost its settings: an endpoint that
/// takes no client authentication (Google's, Weibo's) still works then.
public struct OAuth2Revocation: Sendable {
    /// What accompanies the token to say which client asks.
    public enum ClientIdentification: Sendable {
        /// Nothing (Google, Weibo, Salesforce, Strava).
        case none
        /// `client_id` alone, no secret (Twitch).
        case clientID(String)
        /// The client credentials, the way the token endpoint takes them (RFC 7009 §2.1).
        case credentials(OAuth2Settings.Credentials)
    }

    /// The revocation endpoint.
    public let url: String
    /// The form parameter carrying the token to revoke: `token` (RFC 7009 §2.1) or Weibo's `access_token`.
    public let tokenParameter: String
    /// How the request carries the token.
    public let style: RevocationStyle
    /// Whether the access token is named even when the account holds a refresh token.
    public let namesAccessToken: Bool
    /// What says which client asks.
    public let client: ClientIdentification
    /// Header fields added to the request, replacing the broker's own of the same name.
    public let requestHeaders: [(String, String)]

    /// The client credentials sent along; nil when the endpoint takes none.
    public var credentials: OAuth2Settings.Credentials? {
        if case .credentials(let credentials) = client { return credentials }
        return nil
    }

    /// How to revoke at `provider`: nil when it has no revoke endpoint; throws when the endpoint wants client settings the provider lacks.
    static func of(_ provider: ProviderConfiguration) throws(BrokerError) -> OAuth2Revocation? {
        guard provider.revokeURL != nil else { return nil }
        if provider.revokeAuthenticatesClient { return try OAuth2Settings(provider).revocation }
        if provider.revokeSendsClientID, provider.clientID?.isEmpty ?? true {
            throw .providerNotConfigured(provider.name, missing: [provider.settingNames["client_id"] ?? "client_id"])
        }
        return of(provider, credentials: nil)
    }

    /// How to revoke at `provider` with `credentials` at hand; nil when it has no revoke endpoint.
    static func of(_ provider: ProviderConfiguration, credentials: OAuth2Settings.Credentials?) -> OAuth2Revocation? {
        guard let url = provider.revokeURL else { return nil }
        let client: ClientIdentification
        if provider.revokeAuthenticatesClient, let credentials {
            client = .credentials(credentials)
        } else if provider.revokeSendsClientID, let id = credentials?.id ?? provider.clientID {
            client = .clientID(id)
        } else {
            client = .none
        }
        return OAuth2Revocation(
            url: url, tokenParameter: provider.revokeTokenParameter, style: provider.revocationStyle,
            namesAccessToken: provider.revokesAccessToken, client: client,
            requestHeaders: provider.requestHeaders)
    }

    /// Revokes `account`'s grant through `call`.
    ///
    /// RFC 7009 §2.1: a form POST of `token` with a `token_type_hint`; the
    /// refresh token is preferred, since revoking it ends the whole grant
    /// (Google revokes both either way), unless the provider revokes access
    /// tokens. Weibo's `revokeoauth2` takes the access token as `access_token`
    /// and answers `{"result":"true"}`. A JSON revocation (Notion) sends only
    /// `token`; a Bearer one (Dropbox) sends the access token as its credential.
    func revoke(_ account: Account, through call: ProviderCall) async throws(BrokerError) {
        let step = ProviderStep.revoke
        let refreshToken = namesAccessToken ? nil : account.refreshToken
        var form: [(String, String)]
        if tokenParameter == "token", let refreshToken {
            form = [("token", refreshToken.value), ("token_type_hint", "refresh_token")]
        } else if tokenParameter == "token" {
            form = [("token", account.accessToken.value), ("token_type_hint", "access_token")]
        } else {
            form = [(tokenParameter, account.accessToken.value)]
        }
        var headers: [(String, String)] = [("Accept", "application/json"), ("User-Agent", ProviderCall.userAgent)]
        var body: [UInt8] = []
        switch style {
        case .form, .json:
            if style == .json { form = [form[0]] }
            switch client {
            case .none: break
            case .clientID(let id): form.append(("client_id", id))
            case .credentials(let credentials): credentials.add(to: &form, headers: &headers)
            }
            let format: ProviderRequestFormat = style == .json ? .json : .form
            headers.insert(("Content-Type", format.contentType), at: 0)
            body = format.body(form)
        case .bearer:
            headers.append(("Authorization", "Bearer " + account.accessToken.value))
        }
        let request = UpstreamRequest(method: "POST", url: url, headers: OAuth2Settings.merging(requestHeaders, into: headers), body: body)
        let sensitive = [account.accessToken.value, account.refreshToken?.value, credentials?.secret.value].compactMap { $0 }
        try await call.perform(request, step: step, secrets: sensitive) { response throws(BrokerError) in
            try OAuth2ResponseValidator.checkRevocation(response, step: step.rawValue)
        }
    }
}
