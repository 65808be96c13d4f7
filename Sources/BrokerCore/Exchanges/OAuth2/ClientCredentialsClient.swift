/// Asks one provider's token endpoint for an app token with the client credentials grant (RFC 6749 §4.4).
struct ClientCredentialsClient: Sendable {
    /// The provider's settings.
    let settings: ClientCredentialsSettings
    /// The shared sending, redaction and reporting of provider calls.
    let call: ProviderCall

    /// A POST of `grant_type=client_credentials` and, when `scopes` is not empty, `scope` (RFC 6749 §4.4.2), with
    /// client authentication (§2.3.1, §4.4.2 requires it), asking for JSON.
    ///
    /// The answer passes the same checks as every token answer
    /// (``OAuth2ResponseValidator/tokenGrant(from:step:layout:)``). On failure
    /// the provider's `Retry-After` comes along from a 429 or 5xx answer, as for
    /// a refresh. A refresh token in the answer is dropped: §4.4.3 says none
    /// should be issued, and the broker asks again with the client's own credentials.
    func fetch(scopes: [String]) async throws(RefreshFailure) -> TokenGrant {
        let step = ProviderStep.clientCredentials
        var form: [(String, String)] = [("grant_type", "client_credentials")]
        if !scopes.isEmpty { form.append(("scope", scopes.joined(separator: settings.scopeSeparator))) }
        var headers: [(String, String)] = [
            ("Content-Type", settings.tokenRequestFormat.contentType),
            ("Accept", "application/json"),
            ("User-Agent", ProviderCall.userAgent),
        ]
        settings.credentials.add(to: &form, headers: &headers)
        let request = UpstreamRequest(
            method: "POST", url: settings.tokenURL, headers: OAuth2Settings.merging(settings.requestHeaders, into: headers),
            body: settings.tokenRequestFormat.body(form))
        let layout = settings.tokenAnswer
        var retryAfter: String?
        do throws(BrokerError) {
            var grant = try await call.perform(request, step: step, secrets: [settings.credentials.secret.value]) {
                response throws(BrokerError) in
                if response.status == 429 || response.status >= 500 { retryAfter = response.header("Retry-After") }
                return try OAuth2ResponseValidator.tokenGrant(from: response, step: step.rawValue, layout: layout)
            }
            grant.refreshToken = nil
            return grant
        } catch {
            throw RefreshFailure(error, retryAfter: retryAfter)
        }
    }
}
