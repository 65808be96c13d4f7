import BrokerCrypto
import Foundation

/// The OAuth 1.0a three-legged flow (RFC 5849 §2) for one provider: temporary credentials, the user's approval, token credentials.
///
/// RFC 5849 defines no refresh and no revocation, and the Twitter preset names
/// no revoke endpoint, so this exchange has neither.
struct OAuth1Exchange: ProviderExchange {
    /// The provider's settings (`kind: oauth1`).
    let settings: OAuth1Settings
    /// The broker around the exchange.
    let context: ExchangeContext

    /// A client whose timestamps come from the injected clock.
    var client: OAuth1Client {
        let now = context.now
        return OAuth1Client(settings: settings, call: context.call, timestamp: { Int(now().timeIntervalSince1970) })
    }

    /// Neither refresh nor revocation.
    var capabilities: ExchangeCapabilities { [] }

    /// Gets temporary credentials, whose secret the flow keeps, and the authorize URL carrying the token.
    ///
    /// Twitter's callback carries no `state`: a browser flow is found again through
    /// the flow cookie. A flow driven by a back end has no cookie, so its state rides
    /// in `oauth_callback`'s query, which the provider keeps (RFC 5849 §2.2).
    func begin(state: String, binding: String) async throws(BrokerError) -> ExchangeStart {
        let redirectURI = context.redirectURI
        let callback = binding == AuthorizationService.apiBinding ? FormEncoding.url(redirectURI, adding: [("state", state)]) : redirectURI
        let client = self.client
        let temporary = try await client.requestTemporaryCredentials(callback: callback)
        return ExchangeStart(
            authorizeURL: client.authorizeURL(requestToken: temporary.token),
            requestToken: temporary.token, requestTokenSecret: temporary.secret)
    }

    /// Checks the callback against the flow, trades the verifier for token credentials and names the user.
    ///
    /// Order: `denied` → the callback's `oauth_token` equals this flow's request
    /// token → a verifier; every refusal makes no provider call.
    func complete(callback query: [String: String], flow: PendingFlow) async throws(BrokerError) -> ExchangeCompletion {
        // Twitter's cancel button: `?denied=<request token>` and no verifier.
        if query["denied"] != nil { throw .accessDenied }
        // RFC 5849 §2.2 and OAuth Security Advisory 2009.1: only the token issued to this browser's flow completes it.
        guard let expected = flow.requestToken, let secret = flow.requestTokenSecret,
            let token = query["oauth_token"], ConstantTime.equals(token, expected)
        else { throw .invalidState }
        guard let verifier = query["oauth_verifier"], !verifier.isEmpty else {
            throw .badRequest("The callback has neither an oauth_verifier nor denied")
        }
        let client = self.client
        let grant = try await client.requestTokenCredentials(requestToken: token, requestTokenSecret: secret, verifier: verifier)
        let tokenSecret = grant.tokenSecret ?? Secret("")
        guard let known = grant.uid else {
            let user = try await client.fetchUser(token: grant.accessToken, tokenSecret: tokenSecret)
            return ExchangeCompletion(grant: grant, uid: user.uid, screenName: grant.screenName ?? user.screenName)
        }
        try ProviderUserID.check(known, step: ProviderStep.accessToken.rawValue)
        var screenName = grant.screenName
        if settings.userURL != nil, let user = try await profile(client, grant.accessToken, tokenSecret) {
            // The same credentials cannot name two users; a provider that says so is not trusted.
            guard ExactKey.same(user.uid, known) else {
                throw .upstreamError(
                    step: ProviderStep.userInfo.rawValue, reason: "the user response names another user than the access token")
            }
            screenName = user.screenName ?? screenName
        }
        return ExchangeCompletion(grant: grant, uid: known, screenName: screenName)
    }

    /// The profile when the user endpoint answers, nil when it fails: the user is already named, so a profile is optional.
    ///
    /// Twitter's free API tier refuses `verify_credentials` (403, code 453) although the tokens are good.
    private func profile(_ client: OAuth1Client, _ token: Secret, _ tokenSecret: Secret) async throws(BrokerError) -> (
        uid: String, screenName: String?
    )? {
        do {
            return try await client.fetchUser(token: token, tokenSecret: tokenSecret)
        } catch .upstreamError, .upstreamTimeout {
            return nil
        } catch {
            throw error
        }
    }
}
