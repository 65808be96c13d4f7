import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

/// The TMDB fake, called in process: request token, approval, session, account, deletion (reference providers.md §3).
@Suite struct FakeTMDBProviderTests {
    static let key = "TMDBKEYSENTINEL0123456789abcdef0"

    static func json(_ response: Response) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
    }

    @Test func anApprovedTokenBecomesOneSessionAndAnUnapprovedOneIsDenied() async throws {
        let fake = FakeTMDBProvider(apiKey: Self.key)
        let refused = await fake.router.respond(to: .make(.GET, "/3/authentication/token/new?api_key=wrong"))
        #expect(refused.status.code == 401 && Self.json(refused)["status_code"] as? Int == 7)
        let new = Self.json(await fake.router.respond(to: .make(.GET, "/3/authentication/token/new?api_key=" + Self.key)))
        let token = try #require(new["request_token"] as? String)
        #expect(token.count == 40 && (new["expires_at"] as? String)?.hasSuffix(" UTC") == true)
        let approve = await fake.router.respond(to: .make(.GET, "/authenticate/\(token)?redirect_to=http%3A%2F%2Fapp%2Fcb%3Fstate%3Ds"))
        #expect(approve.headers["Location"] == "http://app/cb?state=s&request_token=\(token)&approved=true")
        let session = await fake.router.respond(
            to: .make(
                .POST, "/3/authentication/session/new",
                headers: [("Authorization", "Bearer " + Self.key)],
                body: #"{"request_token":"\#(token)"}"#))
        let id = try #require(Self.json(session)["session_id"] as? String)
        let again = await fake.router.respond(to: .make(.GET, "/3/authentication/session/new?api_key=\(Self.key)&request_token=\(token)"))
        #expect(Self.json(again)["status_code"] as? Int == 33)
        let account = Self.json(await fake.router.respond(to: .make(.GET, "/3/account?api_key=\(Self.key)&session_id=\(id)")))
        #expect(account["id"] as? Int == FakeTMDBProvider.accountID)

        let other = try #require(
            Self.json(await fake.router.respond(to: .make(.GET, "/3/authentication/token/new?api_key=" + Self.key)))["request_token"]
                as? String)
        let denied = Self.json(
            await fake.router.respond(to: .make(.GET, "/3/authentication/session/new?api_key=\(Self.key)&request_token=\(other)")))
        #expect(denied["failure"] as? Bool == true && denied["status_code"] as? Int == 17)
        #expect(fake.state.sessionMethods == ["POST", "GET", "GET"])
    }
}
