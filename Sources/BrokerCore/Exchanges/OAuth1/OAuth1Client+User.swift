extension OAuth1Client {
    /// Names the user behind token credentials with a signed `GET` of the provider's `user_url`.
    ///
    /// Twitter's `verify_credentials.json` answers a user object; the id is the
    /// configured field (`id_str`), else `id`, and the screen name `screen_name`.
    /// Query parameters in `user_url` are signed too (RFC 5849 §3.4.1.3.1).
    public func fetchUser(token: Secret, tokenSecret: Secret) async throws(BrokerError) -> (uid: String, screenName: String?) {
        let step = ProviderStep.userInfo
        guard let url = settings.userURL else {
            throw .upstreamError(step: step.rawValue, reason: "the access token response names no user and the provider has no user_url")
        }
        let header = signer(token: token.value, tokenSecret: tokenSecret.value).authorizationHeader(method: "GET", url: url)
        let request = UpstreamRequest(
            method: "GET", url: url,
            headers: [
                ("Authorization", header), ("Accept", "application/json"), ("User-Agent", ProviderCall.userAgent),
            ])
        let user = try await call.perform(request, step: step, secrets: sensitive(token.value, tokenSecret.value)) {
            response throws(BrokerError) in
            try Self.jsonObject(of: response, step: step.rawValue)
        }
        let field = settings.userIDField
        guard let uid = ProviderValue.identifier(user[field]) ?? ProviderValue.identifier(user["id"]) else {
            throw .upstreamError(step: step.rawValue, reason: "the user response has no \(field)")
        }
        try ProviderUserID.check(uid, step: step.rawValue)
        return (uid, ProviderValue.displayName(user["screen_name"]))
    }
}
