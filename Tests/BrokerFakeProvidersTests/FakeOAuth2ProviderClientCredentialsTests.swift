import BrokerCrypto
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

/// The fake's client credentials grant (RFC 6749 §4.4): offered only when configured, after client authentication, counted.
@Suite struct FakeOAuth2ProviderClientCredentialsTests {
    typealias T = FakeOAuth2ProviderTests

    static func grant(_ provider: FakeOAuth2Provider, _ form: [(String, String)], headers: [(String, String)] = []) async -> Response {
        await T.send(
            provider, .POST, provider.configuration.paths.token, headers: headers, form: [("grant_type", "client_credentials")] + form)
    }

    @Test func aProviderWithoutTheGrantRefusesIt() async {
        let provider = T.provider()
        let reply = await Self.grant(provider, [("client_id", "acme-client-id"), ("client_secret", T.secret)])
        #expect(reply.status.code == 400)
        #expect(T.json(reply)["error"] as? String == "unsupported_grant_type")
        #expect(provider.clientCredentialsCalls == 0)
    }

    @Test func theAuthenticatedClientGetsATokenWithoutARefreshTokenAndIsCounted() async {
        let provider = T.provider { $0.clientCredentials = true }
        let reply = await Self.grant(provider, [("client_id", "acme-client-id"), ("client_secret", T.secret), ("scope", "read write")])
        #expect(reply.status.code == 200)
        let body = T.json(reply)
        #expect(body["access_token"] as? String == "ACME-ACCESS-SENTINEL-1")
        #expect(body["expires_in"] as? Int == 3600)
        #expect(body["scope"] as? String == "read write")
        #expect(body["refresh_token"] == nil)
        let basic = "Basic " + Base64.encode(Array("acme-client-id:\(T.secret)".utf8))
        #expect((await Self.grant(provider, [], headers: [("Authorization", basic)])).status.code == 200)
        #expect(provider.clientCredentialsCalls == 2)
        #expect(provider.ledger.clientCredentialsScopes == ["read write", nil])
        // The token works at the user endpoint, as the client itself.
        let user = await T.send(provider, .GET, "/user", headers: [("Authorization", "Bearer ACME-ACCESS-SENTINEL-1")])
        #expect(user.status.code == 200)
    }

    @Test func wrongClientCredentialsAre401InvalidClientAndNotCounted() async {
        let provider = T.provider { $0.clientCredentials = true }
        let reply = await Self.grant(provider, [("client_id", "acme-client-id"), ("client_secret", "wrong")])
        #expect(reply.status.code == 401)
        #expect(T.json(reply)["error"] as? String == "invalid_client")
        #expect((await Self.grant(provider, [])).status.code == 401)
        #expect(provider.clientCredentialsCalls == 0)
        #expect(provider.tokenCalls == 2)
    }

    @Test func aFailureCanBeAskedForThroughTheControlRoute() async {
        let provider = T.provider {
            $0.clientCredentials = true
            $0.controlRoutes = true
        }
        let set = await T.send(provider, .POST, "/_fake/control", form: [("client_credentials_failure", "rate_limited:7")])
        #expect(set.status.code == 200)
        let reply = await Self.grant(provider, [("client_id", "acme-client-id"), ("client_secret", T.secret)])
        #expect(reply.status.code == 429)
        #expect(reply.headers["Retry-After"] == "7")
        let stats = T.json(await T.send(provider, .GET, "/_fake/stats"))
        #expect(stats["client_credentials_calls"] as? Int == 1)
    }
}
