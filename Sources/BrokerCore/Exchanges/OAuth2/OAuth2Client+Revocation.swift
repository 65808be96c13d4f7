extension OAuth2Client {
    /// Revokes the account's grant at the provider; does nothing when the provider has no revoke endpoint.
    ///
    /// RFC 7009 §2.1: a form POST of `token` with a `token_type_hint`; the
    /// refresh token is preferred, since revoking it ends the whole grant
    /// (Google revokes both either way). Weibo's `revokeoauth2` takes the access
    /// token as `access_token` and answers `{"result":"true"}`.
    public func revoke(account: Account) async throws(BrokerError) {
        guard let revokeURL = provider.revokeURL else { return }
        let step = ProviderStep.revoke
        let parameter = provider.revokeTokenParameter
        var form: [(String, String)]
        if parameter == "token", let refreshToken = account.refreshToken {
            form = [("token", refreshToken.value), ("token_type_hint", "refresh_token")]
        } else if parameter == "token" {
            form = [("token", account.accessToken.value), ("token_type_hint", "access_token")]
        } else {
            form = [(parameter, account.accessToken.value)]
        }
        var headers: [(String, String)] = [
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Accept", "application/json"),
            ("User-Agent", ProviderCall.userAgent),
        ]
        if provider.revokeAuthenticatesClient {
            addClientAuthentication(form: &form, headers: &headers)
        }
        let request = UpstreamRequest(method: "POST", url: revokeURL, headers: headers, body: FormEncoding.body(form))
        let sensitive = [account.accessToken.value, account.refreshToken?.value, provider.clientSecret?.value].compactMap { $0 }
        try await call.perform(request, step: step, secrets: sensitive) { response throws(BrokerError) in
            try OAuth2ResponseValidator.checkRevocation(response, step: step.rawValue)
        }
    }
}
