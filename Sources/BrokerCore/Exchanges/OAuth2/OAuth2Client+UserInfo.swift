extension OAuth2Client {
    /// Names the user behind `accessToken` at the provider's user endpoint.
    ///
    /// Weibo's `get_uid.json` takes the token as the `access_token` parameter;
    /// GitHub's `/user` and Google's OpenID userinfo take a Bearer header
    /// (RFC 6750 §2.1), Twitch's validate endpoint the scheme `OAuth`. Linear's
    /// GraphQL endpoint is asked with a POSTed JSON body, HubSpot's introspection
    /// endpoint with a form (RFC 7662 §2.1). The id is the configured JSON paths
    /// (`uid`, `id`, `sub`, `data.viewer.id`), each a string or an integer as written.
    public func fetchUser(accessToken: Secret) async throws(BrokerError) -> (uid: String, screenName: String?) {
        let step = ProviderStep.userInfo
        guard let userURL = settings.userURL else {
            throw .upstreamError(step: step.rawValue, reason: "the token response names no user and the provider has no user_url")
        }
        let request = userRequest(url: userURL, accessToken: accessToken)
        let secrets = [accessToken.value, settings.credentials.secret.value]
        let user = try await call.perform(request, step: step, secrets: secrets) { response throws(BrokerError) in
            try OAuth2ResponseValidator.jsonObject(from: response, step: step.rawValue)
        }
        let fields = settings.userIDFields
        guard let uid = ProviderJSONPath.userID(at: fields, in: user) else {
            // A value that is there but not a string or an integer written exactly counts as absent.
            throw .upstreamError(
                step: step.rawValue, reason: "the user response has no \(fields.map(\.description).joined(separator: " and "))")
        }
        try ProviderUserID.check(uid, step: step.rawValue)
        let names =
            settings.userRequest.userNameField.map { [ProviderJSONPath($0)] }
            ?? Self.userNameFields.map(ProviderJSONPath.init)
        let screenName = names.lazy.compactMap { ProviderValue.displayName($0.value(in: user)) }.first
        return (uid, screenName)
    }

    /// Where a user answer names the person when the provider sets no `user_name_field`, first present wins:
    /// `screen_name`, `login` and `name` as before, then OpenID's `preferred_username`, `username`, `display_name`
    /// (Spotify, Twitch) and last an `email`, so an answer with any of them is not shown by its bare id.
    static let userNameFields = ["screen_name", "login", "name", "preferred_username", "username", "display_name", "email"]

    /// The request that asks the user endpoint at `url` about `accessToken`, as the provider wants it asked.
    func userRequest(url: String, accessToken: Secret) -> UpstreamRequest {
        var headers: [(String, String)] = [("Accept", "application/json"), ("User-Agent", ProviderCall.userAgent)]
        let asked = settings.userRequest
        if asked.introspection {
            // RFC 7662 §2.1: the token in a form, the client authenticated as at the token endpoint.
            var form = [("token", accessToken.value), ("token_type_hint", "access_token")]
            settings.credentials.add(to: &form, headers: &headers)
            headers.insert(("Content-Type", ProviderRequestFormat.form.contentType), at: 0)
            return UpstreamRequest(
                method: "POST", url: url, headers: settings.headers(headers), body: ProviderRequestFormat.form.body(form))
        }
        if let parameter = settings.userTokenParameter {
            return UpstreamRequest(
                method: "GET", url: FormEncoding.url(url, adding: [(parameter, accessToken.value)]),
                headers: settings.headers(headers))
        }
        if let field = asked.tokenHeader {
            headers.append((field.name, field.value(accessToken.value)))
        } else {
            headers.append(("Authorization", asked.authScheme + " " + accessToken.value))
        }
        guard let body = asked.jsonBody else {
            return UpstreamRequest(method: "GET", url: url, headers: settings.headers(headers))
        }
        headers.insert(("Content-Type", ProviderRequestFormat.json.contentType), at: 0)
        return UpstreamRequest(method: "POST", url: url, headers: settings.headers(headers), body: Array(body.utf8))
    }
}
