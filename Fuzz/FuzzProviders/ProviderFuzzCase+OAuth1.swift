#if FUZZING
import FuzzSupport
@testable import BrokerCore

/// OAuth 1.0a with Twitter: temporary credentials, then token credentials (and the user endpoint after them).
extension ProviderFuzzCase {
    /// A client with a fixed nonce and the fixed clock, so every signature is repeatable.
    var oauth1Client: OAuth1Client {
        OAuth1Client(
            settings: ProviderFixtures.settings(ProviderFixtures.twitter, OAuth1Settings.init), upstream: upstream,
            nonce: { "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg" },
            timestamp: { Int(ProviderFixtures.now.timeIntervalSince1970) })
    }

    /// RFC 5849 §2.1: a usable token and a secret that the pending flow keeps intact, or a refusal without the consumer secret.
    func checkRequestToken() {
        let client = oauth1Client
        let outcome = Blocking.run { () async throws(BrokerError) in
            try await client.requestTemporaryCredentials(callback: ProviderFixtures.redirectURI)
        }
        switch outcome {
        case .success(let temporary):
            require(ProviderCall.isUsableToken(temporary.token), "an unusable request token accepted")
            require(!temporary.secret.value.isEmpty, "an empty request token secret accepted")
            checkStoredFlow(provider: "twitter", requestToken: temporary.token, secret: temporary.secret)
        case .failure(let error):
            checkRefusal(error, secrets: [ProviderFixtures.consumerSecret])
        }
    }

    /// RFC 5849 §2.3, then what the service does: check `user_id`, else ask the user endpoint; an account that stores.
    func checkAccessToken() {
        let client = oauth1Client
        let outcome = Blocking.run { () async throws(BrokerError) -> (TokenGrant, String, String?) in
            let grant = try await client.requestTokenCredentials(
                requestToken: ProviderFixtures.requestToken, requestTokenSecret: Secret(ProviderFixtures.requestTokenSecret),
                verifier: ProviderFixtures.verifier)
            // As AuthorizationService.completeOAuth1: the service, not the client, checks a `user_id` from the answer.
            if let uid = grant.uid {
                try ProviderUserID.check(uid, step: "access_token")
                return (grant, uid, grant.screenName)
            }
            let user = try await client.fetchUser(token: grant.accessToken, tokenSecret: grant.tokenSecret ?? Secret(""))
            return (grant, user.uid, grant.screenName ?? user.screenName)
        }
        switch outcome {
        case .success(let (grant, uid, screenName)):
            checkLifetime(grant.expiresIn)
            checkStored(account(provider: "twitter", uid: uid, grant: grant, screenName: screenName))
        case .failure(let error):
            checkRefusal(error, secrets: [ProviderFixtures.consumerSecret, ProviderFixtures.requestTokenSecret, ProviderFixtures.verifier])
        }
    }
}
#endif
