#if FUZZING
import FuzzSupport
@testable import BrokerCore

/// OAuth 2.0: the code exchange (and the user endpoint after it), the user endpoint alone, the refresh grant.
extension ProviderFuzzCase {
    /// RFC 6749 §4.1.3 with Weibo, then what the service does: check a uid from the token answer, else ask the user endpoint.
    ///
    /// The user endpoint gets the same answer (the fake has only one), which
    /// matters for an answer that is both a grant and a user object.
    func checkExchange() {
        let client = OAuth2Client(
            settings: ProviderFixtures.settings(ProviderFixtures.weibo, OAuth2Settings.init), redirectURI: ProviderFixtures.redirectURI,
            upstream: upstream)
        let secrets = [ProviderFixtures.code, ProviderFixtures.codeVerifier, ProviderFixtures.clientSecret]
        let outcome = Blocking.run { () async throws(BrokerError) -> (TokenGrant, String, String?) in
            let grant = try await client.exchange(code: ProviderFixtures.code, codeVerifier: ProviderFixtures.codeVerifier)
            // As AuthorizationService.completeOAuth2: the service, not the client, checks a uid from the token answer.
            if let uid = grant.uid {
                try ProviderUserID.check(uid, step: "token_exchange")
                return (grant, uid, grant.screenName)
            }
            let user = try await client.fetchUser(accessToken: grant.accessToken)
            return (grant, user.uid, grant.screenName ?? user.screenName)
        }
        switch outcome {
        case .success(let (grant, uid, screenName)):
            checkLifetime(grant.expiresIn)
            checkStored(account(provider: "weibo", uid: uid, grant: grant, screenName: screenName))
        case .failure(let error):
            checkRefusal(error, secrets: secrets)
        }
    }

    /// GitHub's `/user` with a Bearer token: a usable uid and an account that stores, or a refusal without the token.
    func checkUserInfo() {
        let client = OAuth2Client(
            settings: ProviderFixtures.settings(ProviderFixtures.github, OAuth2Settings.init), redirectURI: ProviderFixtures.redirectURI,
            upstream: upstream)
        let fetched = Blocking.run { () async throws(BrokerError) in
            try await client.fetchUser(accessToken: Secret(ProviderFixtures.accessToken))
        }
        switch fetched {
        case .success(let user):
            let grant = TokenGrant(accessToken: Secret(ProviderFixtures.accessToken), tokenType: "bearer")
            checkStored(account(provider: "github", uid: user.uid, grant: grant, screenName: user.screenName))
        case .failure(let error):
            checkRefusal(error, secrets: [ProviderFixtures.accessToken, ProviderFixtures.clientSecret])
        }
    }

    /// RFC 6749 §6 with Google: a grant that stores, or a failure whose `Retry-After` reads as a bounded delay.
    ///
    /// The field is kept only from a 429 or 5xx answer (``OAuth2Client/attemptRefresh(refreshToken:)``).
    func checkRefresh() {
        let client = OAuth2Client(
            settings: ProviderFixtures.settings(ProviderFixtures.google, OAuth2Settings.init), redirectURI: ProviderFixtures.redirectURI,
            upstream: upstream)
        let outcome = Blocking.run { () async throws(RefreshFailure) in
            try await client.attemptRefresh(refreshToken: Secret(ProviderFixtures.refreshToken))
        }
        switch outcome {
        case .success(let grant):
            checkLifetime(grant.expiresIn)
            var refreshed = account(provider: "google", uid: "110169484474386276334", grant: grant, screenName: nil)
            refreshed.refreshToken = grant.refreshToken ?? Secret(ProviderFixtures.refreshToken)
            refreshed.refreshedAt = ProviderFixtures.now
            checkStored(refreshed)
        case .failure(let failure):
            checkRefusal(failure.error, secrets: [ProviderFixtures.refreshToken, ProviderFixtures.clientSecret])
            let status = answer.response.status
            require(failure.retryAfter == nil || status == 429 || status >= 500, "a Retry-After kept from HTTP \(status)")
            if let field = failure.retryAfter { checkRetryAfter(field) }
        }
        // The parser is also fed the field whatever the status, so every value the fuzzer writes reaches it.
        if let field = answer.response.header("Retry-After") { checkRetryAfter(field) }
    }

    /// `Retry-After` gives no delay or a finite one within 0…``RetryAfter/saturation``.
    func checkRetryAfter(_ field: String) {
        guard let delay = RetryAfter.delay(field, at: ProviderFixtures.now) else { return }
        require(delay.isFinite && delay >= 0 && delay <= RetryAfter.saturation, "a Retry-After delay of \(delay) s")
    }
}
#endif
