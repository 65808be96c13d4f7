#if FUZZING
import FuzzSupport
@testable import BrokerCore

/// TMDB v3 session authentication: request token, session (and the account after it), account.
extension ProviderFuzzCase {
    /// A TMDB client against the fake provider.
    var tmdbClient: TMDBClient {
        TMDBClient(settings: ProviderFixtures.settings(ProviderFixtures.tmdb, TMDBSettings.init), upstream: upstream)
    }

    /// A request token fit for a URL path that the pending flow keeps intact, or a refusal without the API key.
    func checkTMDBRequestToken() {
        let client = tmdbClient
        switch Blocking.run({ () async throws(BrokerError) in try await client.createRequestToken() }) {
        case .success(let token):
            require(TMDBClient.isPlainToken(token), "a request token that is not plain accepted")
            checkStoredFlow(provider: "tmdb", requestToken: token, secret: nil)
        case .failure(let error):
            checkRefusal(error, secrets: [ProviderFixtures.apiKey])
        }
    }

    /// A session id, then (as the service does) the account it belongs to; an account that stores, or a refusal.
    func checkTMDBSession() {
        let client = tmdbClient
        let outcome = Blocking.run { () async throws(BrokerError) -> (Secret, String, String?) in
            let session = try await client.createSession(requestToken: ProviderFixtures.tmdbRequestToken)
            let user = try await client.fetchAccount(sessionID: session)
            return (session, user.uid, user.username)
        }
        switch outcome {
        case .success(let (session, uid, username)):
            require(ProviderCall.isUsableToken(session.value), "an unusable session id accepted")
            checkStored(
                account(provider: "tmdb", uid: uid, grant: TokenGrant(accessToken: session, screenName: username), screenName: username))
        case .failure(let error):
            checkRefusal(error, secrets: [ProviderFixtures.apiKey])
        }
    }

    /// `/account` with a known session: a usable uid and an account that stores, or a refusal without the key or session.
    func checkTMDBAccount() {
        let client = tmdbClient
        let session = Secret(ProviderFixtures.sessionID)
        switch Blocking.run({ () async throws(BrokerError) in try await client.fetchAccount(sessionID: session) }) {
        case .success(let user):
            let grant = TokenGrant(accessToken: session, screenName: user.username)
            checkStored(account(provider: "tmdb", uid: user.uid, grant: grant, screenName: user.username))
        case .failure(let error):
            checkRefusal(error, secrets: [ProviderFixtures.apiKey, ProviderFixtures.sessionID])
        }
    }
}
#endif
