#if FUZZING
import FuzzSupport
@testable import BrokerCore

/// The catalogue's layouts: a token answer read under a JSON path with a joined user id, a user answer read through paths.
extension ProviderFuzzCase {
    /// Slack's `oauth.v2.access`: tokens under `authed_user` (else at the top), the user `team.id:authed_user.id`.
    ///
    /// As the exchange does for a preset that names its users only in the token
    /// answer: a grant without an id is a refusal, an id must pass ``ProviderUserID``.
    func checkCatalogueExchange() {
        let client = OAuth2Client(
            settings: ProviderFixtures.settings(ProviderFixtures.slack, OAuth2Settings.init), redirectURI: ProviderFixtures.redirectURI,
            upstream: upstream)
        let secrets = [ProviderFixtures.code, ProviderFixtures.clientSecret]
        let outcome = Blocking.run { () async throws(BrokerError) -> (TokenGrant, String) in
            let grant = try await client.exchange(code: ProviderFixtures.code, codeVerifier: nil)
            guard let uid = grant.uid else {
                throw .upstreamError(step: "token_exchange", reason: "the token response has no team.id and authed_user.id")
            }
            try ProviderUserID.check(uid, step: "token_exchange")
            return (grant, uid)
        }
        switch outcome {
        case .success(let (grant, uid)):
            require(
                uid.utf8.filter { $0 == UInt8(ascii: ":") }.count == 1,
                "a joined id of \(uid.utf8.count) bytes with other than one colon")
            checkLifetime(grant.expiresIn)
            checkStored(account(provider: "slack", uid: uid, grant: grant, screenName: grant.screenName))
        case .failure(let error):
            checkRefusal(error, secrets: secrets)
        }
    }

    /// HubSpot's introspection endpoint: a form POST with client credentials, the user `hub_id:user_id`, the name `user`.
    func checkCatalogueUserInfo() {
        let client = OAuth2Client(
            settings: ProviderFixtures.settings(ProviderFixtures.hubspot, OAuth2Settings.init), redirectURI: ProviderFixtures.redirectURI,
            upstream: upstream)
        let fetched = Blocking.run { () async throws(BrokerError) in
            try await client.fetchUser(accessToken: Secret(ProviderFixtures.accessToken))
        }
        switch fetched {
        case .success(let user):
            require(user.uid.utf8.filter { $0 == UInt8(ascii: ":") }.count == 1, "a joined id with other than one colon")
            let grant = TokenGrant(accessToken: Secret(ProviderFixtures.accessToken), tokenType: "bearer")
            checkStored(account(provider: "hubspot", uid: user.uid, grant: grant, screenName: user.screenName))
        case .failure(let error):
            checkRefusal(error, secrets: [ProviderFixtures.accessToken, ProviderFixtures.clientSecret])
        }
    }
}
#endif
