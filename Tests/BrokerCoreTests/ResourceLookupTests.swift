import BrokerCrypto
import Foundation
import Testing

@testable import BrokerCore

/// Documents fetched with a new account's token and kept under `raw` (Atlassian's accessible resources): what is
/// kept of a hostile answer, how a failure reads, that refreshes keep them, and the providers-file key.
struct ResourceLookupTests {
    static let resourcesURL = "https://api.atlassian.com/oauth/token/accessible-resources"
    static let token = "atlassian-access-token-SENTINEL"

    private func atlassian(_ upstream: FakeUpstream) throws -> OAuth2Client {
        let environment = ["ATLASSIAN_CLIENT_ID": "a", "ATLASSIAN_CLIENT_SECRET": "atlassian-secret-SENTINEL"]
        let provider = try #require(try ProviderRegistry.load(environment: environment, providersFile: nil).provider(named: "atlassian"))
        return OAuth2Client(settings: try OAuth2Settings(provider), redirectURI: "https://broker.example/callback", upstream: upstream)
    }

    private func site(_ n: Int, scopes: Int = 1) -> String {
        let list = (0..<scopes).map { "\"read:jira-work-\($0)\"" }.joined(separator: ",")
        return
            #"{"id":"cloud-\#(n)","name":"Site \#(n)","url":"https://site\#(n).atlassian.net","scopes":[\#(list)],"avatarUrl":"https://a.example/\#(n).png"}"#
    }

    /// Looks the resources up for a grant whose own answer kept `extras`, with the endpoint answering `status` and `body`.
    private func lookUp(status: Int = 200, _ body: String, extras: String? = #"{"scope":"read:me offline_access"}"#) async throws
        -> Result<TokenGrant, BrokerError>
    {
        let upstream = FakeUpstream()
        await upstream.on(Self.resourcesURL, respond: UpstreamResponse(status: status, body: Array(body.utf8)))
        let client = try atlassian(upstream)
        var grant = TokenGrant(accessToken: Secret(Self.token), extras: extras)
        do throws(BrokerError) {
            try await client.lookUpResources(into: &grant)
        } catch {
            return .failure(error)
        }
        let request = try #require(await upstream.requests(to: Self.resourcesURL).first)
        #expect(request.method == "GET")
        #expect(request.headers.contains { $0.0 == "Authorization" && $0.1 == "Bearer " + Self.token })
        return .success(grant)
    }

    private func kept(_ grant: TokenGrant) throws -> [String: Any] {
        let text = try #require(grant.extras)
        return try #require(TokenExtras.object(text))
    }

    @Test func atlassiansSitesAreKeptBesideTheAnswersFieldsWithoutTheirAvatars() async throws {
        let grant = try await lookUp("[\(site(1)),\(site(2))]").get()
        let fields = try kept(grant)
        #expect(fields["scope"] as? String == "read:me offline_access")
        let sites = try #require(fields["accessible_resources"] as? [[String: Any]])
        #expect(sites.map { $0["id"] as? String } == ["cloud-1", "cloud-2"])
        #expect(sites.allSatisfy { Set($0.keys) == ["id", "name", "url", "scopes"] })
    }

    @Test func aLongListKeepsItsFirstEntriesAndNeverMoreThanTheKeptFieldsHold() async throws {
        let many = try kept(try await lookUp("[" + (1...100).map { site($0) }.joined(separator: ",") + "]").get())
        #expect((many["accessible_resources"] as? [Any])?.count == ResourceLookup.maximumEntries)
        let large = try await lookUp("[" + (1...20).map { site($0, scopes: 60) }.joined(separator: ",") + "]").get()
        let largeFields = try kept(large)
        let sites = try #require(largeFields["accessible_resources"] as? [[String: Any]])
        #expect(!sites.isEmpty && sites.count < 20)
        #expect(sites.first?["id"] as? String == "cloud-1")
        #expect(try #require(large.extras).utf8.count <= TokenExtras.maximumBytes)
    }

    @Test(arguments: [
        (401, #"{"code":401,"message":"Unauthorized"}"#, "HTTP 401"),
        (200, #"{"error":"invalid_token"}"#, "invalid_token"),
        (200, "<html>", "not valid JSON"),
        (200, #""a string""#, "not valid JSON"),
        (200, String(repeating: "[", count: 10) + String(repeating: "]", count: 10), "deeper"),
        // An object too large to keep even alone (written out in the test, so its name stays short).
        (200, "LARGE", "too large"),
    ])
    func aFailedOrUnfitAnswerFailsTheConnectionNamingTheStep(status: Int, body: String, reason: String) async throws {
        let body = body == "LARGE" ? #"{"id":"x","name":"\#(String(repeating: "x", count: 20_000))"}"# : body
        guard case .failure(let error) = try await lookUp(status: status, body),
            case .upstreamError(let step, let why) = error
        else {
            Issue.record("\(body.prefix(40)) was kept")
            return
        }
        #expect(step == "resource_lookup")
        #expect(why.contains(reason), "\(why)")
        #expect(!why.contains("SENTINEL"))
    }

    @Test func aRefreshKeepsWhatConnectingLookedUp() {
        let old = #"{"accessible_resources":[{"id":"cloud-1"}],"scope":"a"}"#
        let merged = TokenExtras.merged(old: old, new: #"{"scope":"b"}"#, also: ["accessible_resources"])
        #expect(merged == #"{"accessible_resources":[{"id":"cloud-1"}],"scope":"b"}"#)
        #expect(TokenExtras.merged(old: old, new: #"{"scope":"b"}"#) == #"{"scope":"b"}"#)
    }

    @Test func theProvidersFileStatesALookupAsAURLOrWithTheFieldsKept() throws {
        let file = #"""
            {"providers": {"acme": {"kind": "oauth2", "client_id": "acme", "client_secret": "s",
                "authorize_url": "https://acme.example/authorize", "token_url": "https://acme.example/token",
                "user_url": "https://acme.example/me", "resource_urls": {
                    "workspaces": "https://acme.example/workspaces",
                    "sites": {"url": "https://acme.example/sites", "fields": ["id", "url"]}}}}}
            """#
        let acme = try #require(try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8)).provider(named: "acme"))
        #expect(
            acme.resourceLookups == [
                ResourceLookup(name: "sites", url: "https://acme.example/sites", fields: ["id", "url"]),
                ResourceLookup(name: "workspaces", url: "https://acme.example/workspaces"),
            ])
        let off = #"{"providers": {"atlassian": {"client_id": "a", "client_secret": "s", "resource_urls": null}}}"#
        #expect(
            try ProviderRegistry.load(environment: [:], providersFile: Array(off.utf8)).provider(named: "atlassian")?.resourceLookups == [])
    }
}
