extension OAuth2Client {
    /// The `error` values that mean the refresh token itself is dead: the user must authorize again.
    ///
    /// RFC 6749 §5.2: `invalid_grant` covers a refresh token that is invalid,
    /// expired, revoked or issued to another client. GitHub names a dead GitHub
    /// App refresh token `bad_refresh_token`, Slack's `oauth.v2.access`
    /// `invalid_refresh_token` (both with HTTP 200).
    static let deadRefreshTokenErrors: Set<String> = ["invalid_grant", "bad_refresh_token", "invalid_refresh_token"]

    /// Trades `refreshToken` for a new access token (RFC 6749 §6).
    ///
    /// A POST of `grant_type=refresh_token` and `refresh_token` to the refresh
    /// endpoint (the token endpoint unless the provider has its own), with the
    /// same client authentication and body format as the code exchange and no
    /// `scope` (the grant keeps its scope). The answer passes the same validator as the code
    /// exchange. A dead refresh token (see ``deadRefreshTokenErrors``) throws
    /// ``BrokerError/reauthorizationRequired``; a timeout, a 5xx, a transport
    /// failure or any other refusal throws an upstream error, which callers
    /// treat as transient. ``attemptRefresh(refreshToken:)`` also reports `Retry-After`.
    public func refresh(refreshToken: Secret) async throws(BrokerError) -> TokenGrant {
        do {
            return try await attemptRefresh(refreshToken: refreshToken)
        } catch {
            throw error.error
        }
    }

    /// Trades `refreshToken` like ``refresh(refreshToken:)``, and on failure also hands back the provider's `Retry-After`.
    ///
    /// The field is kept from a 429 (RFC 6585 §4) or any 5xx answer (RFC 9110
    /// §10.2.3 names 503; other server errors may send it too); on other
    /// statuses it means something else or nothing, and is dropped.
    public func attemptRefresh(refreshToken: Secret) async throws(RefreshFailure) -> TokenGrant {
        let step = ProviderStep.tokenRefresh
        let request = tokenRequest(
            url: settings.refreshURL, form: [("grant_type", "refresh_token"), ("refresh_token", refreshToken.value)])
        let sensitive = [refreshToken.value, settings.credentials.secret.value]
        let layout = settings.tokenAnswer
        var retryAfter: String?
        do throws(BrokerError) {
            return try await call.perform(request, step: step, secrets: sensitive) { response throws(BrokerError) in
                if response.status == 429 || response.status >= 500 { retryAfter = response.header("Retry-After") }
                if Self.reportsDeadRefreshToken(response) { throw .reauthorizationRequired }
                return try OAuth2ResponseValidator.tokenGrant(from: response, step: step.rawValue, layout: layout)
            }
        } catch {
            throw RefreshFailure(error, retryAfter: retryAfter)
        }
    }

    /// Whether a non-5xx answer names a dead refresh token; a 5xx is the provider's trouble, not the token's.
    ///
    /// The name is the `error` field (RFC 6749 §5.2), or the `code` of an error
    /// object (`{"object":"error","code":"invalid_grant"}`, Notion's shape).
    static func reportsDeadRefreshToken(_ response: UpstreamResponse) -> Bool {
        guard response.status < 500, let fields = ResponseBody(response.body).fields(acceptForm: true) else { return false }
        let error = fields["error"] as? String ?? (fields["object"] as? String == "error" ? fields["code"] as? String : nil)
        return error.map(deadRefreshTokenErrors.contains) ?? false
    }
}
