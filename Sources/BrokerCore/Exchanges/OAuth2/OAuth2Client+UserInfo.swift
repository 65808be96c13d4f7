extension OAuth2Client {
    /// Names the user behind `accessToken` at the provider's user endpoint.
    ///
    /// Weibo's `get_uid.json` takes the token as the `access_token` parameter;
    /// GitHub's `/user` and Google's OpenID userinfo take a Bearer header
    /// (RFC 6750 §2.1). The id is the configured field (`uid`, `id`, `sub`),
    /// accepted as a string or a whole number.
    public func fetchUser(accessToken: Secret) async throws(BrokerError) -> (uid: String, screenName: String?) {
        let step = ProviderStep.userInfo
        guard let userURL = settings.userURL else {
            throw .upstreamError(step: step.rawValue, reason: "the token response names no user and the provider has no user_url")
        }
        var headers: [(String, String)] = [("Accept", "application/json"), ("User-Agent", ProviderCall.userAgent)]
        let url: String
        if let parameter = settings.userTokenParameter {
            url = FormEncoding.url(userURL, adding: [(parameter, accessToken.value)])
        } else {
            url = userURL
            headers.append(("Authorization", "Bearer " + accessToken.value))
        }
        let request = UpstreamRequest(method: "GET", url: url, headers: headers)
        let field = settings.userIDField
        let user = try await call.perform(request, step: step, secrets: [accessToken.value]) { response throws(BrokerError) in
            try OAuth2ResponseValidator.jsonObject(from: response, step: step.rawValue)
        }
        guard let uid = ProviderValue.identifier(user[field]) else {
            throw .upstreamError(step: step.rawValue, reason: "the user response has no \(field)")
        }
        try ProviderUserID.check(uid, step: step.rawValue)
        let screenName = ["screen_name", "login", "name"].lazy.compactMap { ProviderValue.displayName(user[$0]) }.first
        return (uid, screenName)
    }
}
