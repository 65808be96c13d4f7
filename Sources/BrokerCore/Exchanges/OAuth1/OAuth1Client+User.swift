extension OAuth1Client {
    /// Names the user behind token credentials with a signed `GET` of the provider's `user_url`.
    ///
    /// Twitter's `verify_credentials.json` answers a user object; the id is the
    /// configured field (`id_str`), else `id`, and the screen name `screen_name`.
    /// Query parameters in `user_url` are signed too (RFC 5849 §3.4.1.3.1).
    public func fetchUser(token: Secret, tokenSecret: Secret) async throws(BrokerError) -> (uid: String, screenName: String?) {
        let step = "user_info"
        guard let url = provider.userURL else {
            throw .upstreamError(step: step, reason: "the access token response names no user and the provider has no user_url")
        }
        let header = signer(token: token.value, tokenSecret: tokenSecret.value).authorizationHeader(method: "GET", url: url)
        let request = UpstreamRequest(method: "GET", url: url, headers: [
            ("Authorization", header), ("Accept", "application/json"), ("User-Agent", Self.userAgent),
        ])
        let user: [String: Any]
        do {
            user = try Self.jsonObject(of: try await send(request, step: step), step: step)
        } catch {
            throw OAuth2Client.redacting(sensitive(token.value, tokenSecret.value), in: error)
        }
        let field = provider.userIDField ?? "id"
        guard let uid = ProviderValue.identifier(user[field]) ?? ProviderValue.identifier(user["id"]) else {
            throw .upstreamError(step: step, reason: "the user response has no \(field)")
        }
        try ProviderUserID.check(uid, step: step)
        return (uid, ProviderValue.displayName(user["screen_name"]))
    }
}
