/// An OAuth 2.0 provider's revocation endpoint and how to call it (RFC 7009 §2.1).
///
/// Kept apart from the rest of ``OAuth2Settings`` because it is the one call
/// an account may need after its provider lost its settings: an endpoint that
/// takes no client authentication (Google's, Weibo's) still works then.
public struct OAuth2Revocation: Sendable {
    /// The revocation endpoint.
    public let url: String
    /// The form parameter carrying the token to revoke: `token` (RFC 7009 §2.1) or Weibo's `access_token`.
    public let tokenParameter: String
    /// The client credentials sent along; nil when the endpoint takes none.
    public let credentials: OAuth2Settings.Credentials?

    /// How to revoke at `provider`: nil when it has no revoke endpoint; throws when the endpoint wants client credentials the provider lacks.
    static func of(_ provider: ProviderConfiguration) throws(BrokerError) -> OAuth2Revocation? {
        guard let url = provider.revokeURL else { return nil }
        guard provider.revokeAuthenticatesClient else {
            return OAuth2Revocation(url: url, tokenParameter: provider.revokeTokenParameter, credentials: nil)
        }
        return try OAuth2Settings(provider).revocation
    }

    /// Revokes `account`'s grant through `call`.
    ///
    /// RFC 7009 §2.1: a form POST of `token` with a `token_type_hint`; the
    /// refresh token is preferred, since revoking it ends the whole grant
    /// (Google revokes both either way). Weibo's `revokeoauth2` takes the access
    /// token as `access_token` and answers `{"result":"true"}`.
    func revoke(_ account: Account, through call: ProviderCall) async throws(BrokerError) {
        let step = ProviderStep.revoke
        var form: [(String, String)]
        if tokenParameter == "token", let refreshToken = account.refreshToken {
            form = [("token", refreshToken.value), ("token_type_hint", "refresh_token")]
        } else if tokenParameter == "token" {
            form = [("token", account.accessToken.value), ("token_type_hint", "access_token")]
        } else {
            form = [(tokenParameter, account.accessToken.value)]
        }
        var headers: [(String, String)] = [
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Accept", "application/json"),
            ("User-Agent", ProviderCall.userAgent),
        ]
        credentials?.add(to: &form, headers: &headers)
        let request = UpstreamRequest(method: "POST", url: url, headers: headers, body: FormEncoding.body(form))
        let sensitive = [account.accessToken.value, account.refreshToken?.value, credentials?.secret.value].compactMap { $0 }
        try await call.perform(request, step: step, secrets: sensitive) { response throws(BrokerError) in
            try OAuth2ResponseValidator.checkRevocation(response, step: step.rawValue)
        }
    }
}
