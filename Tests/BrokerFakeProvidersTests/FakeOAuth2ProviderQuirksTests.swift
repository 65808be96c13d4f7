import BrokerCrypto
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

/// The OAuth 2.0 fake configured as a catalogue provider, called in process: each quirk it is given, it demands of
/// the client (refusing and recording a miss in ``FakeOAuth2Provider/Ledger/violations``) and speaks in its answers.
@Suite struct FakeOAuth2ProviderQuirksTests {
    typealias T = FakeOAuth2ProviderTests
    typealias Quirks = FakeOAuth2Provider.Quirks
    static let basic = "Basic " + Base64.encode(Array("acme-client-id:\(T.secret)".utf8))

    static func provider(
        pkce: FakeOAuth2Provider.PKCEPolicy = .optional, refreshTokens: FakeOAuth2Provider.RefreshTokens = .rotate,
        _ change: (inout Quirks) -> Void
    ) -> FakeOAuth2Provider {
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: T.secret)
        configuration.redirectURIs = [T.callback]
        configuration.paths = OAuth2Dialect.Paths(
            authorize: "/idp.example/oauth/authorize", token: "/idp.example/oauth/token",
            refresh: "/idp.example/oauth/refresh", user: "/api.example/me",
            revoke: "/idp.example/oauth/revoke")
        configuration.pkce = pkce
        change(&configuration.quirks)
        var behaviour = FakeOAuth2Provider.Behaviour(dialect: .rfc6749)
        behaviour.refreshTokens = refreshTokens
        return FakeOAuth2Provider(configuration, behaviour: behaviour)
    }

    static func authorize(_ p: FakeOAuth2Provider, _ extra: [(String, String)] = []) async -> Response {
        let target =
            "/idp.example/oauth/authorize?"
            + PercentEncoding.encodeForm(
                [("client_id", "acme-client-id"), ("redirect_uri", T.callback), ("response_type", "code"), ("state", "xyz")] + extra)
        return await T.send(p, .GET, target)
    }

    static func code(_ p: FakeOAuth2Provider, _ extra: [(String, String)] = []) async -> String? {
        T.redirectQuery(await authorize(p, extra))["code"]
    }

    static func send(
        _ p: FakeOAuth2Provider, _ method: HTTPMethod, _ path: String, headers: [(String, String)] = [],
        contentType: String? = nil, body: String = ""
    ) async -> Response {
        let fields = headers + (contentType.map { [("Content-Type", $0)] } ?? [])
        return await p.router.respond(to: .make(method, path, headers: fields, body: body))
    }

    static func post(
        _ p: FakeOAuth2Provider, _ path: String, headers: [(String, String)] = [], contentType: String? = nil,
        body: String = ""
    ) async -> Response {
        await send(p, .POST, path, headers: headers, contentType: contentType, body: body)
    }

    static func form(_ pairs: [(String, String)]) -> String { PercentEncoding.encodeForm(pairs) }
    static let formType = "application/x-www-form-urlencoded"

    /// A code exchanged with the credentials in HTTP Basic; the access token and refresh token it gave.
    static func connect(_ p: FakeOAuth2Provider, headers: [(String, String)] = []) async throws -> (access: String, refresh: String?) {
        let code = try #require(await Self.code(p))
        let reply = await post(
            p, "/idp.example/oauth/token", headers: headers + [("Authorization", basic)], contentType: formType,
            body: form([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", T.callback)]))
        #expect(reply.status.code == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        return (try #require(T.json(reply)["access_token"] as? String), T.json(reply)["refresh_token"] as? String)
    }

    @Test func withoutQuirksNothingIsDemandedAndNothingRecorded() async throws {
        let p = FakeOAuth2ProviderTests.provider()
        let code = try #require(await T.code(p))
        #expect(await T.exchange(p, code: code).status.code == 200)
        #expect(p.ledger.violations == [])
        #expect(p.configuration.paths == OAuth2Dialect.rfc6749.paths)
    }

    @Test func theAuthorizeRequestMustCarryTheScopeUnderItsParameterTheExtraParametersAndPKCEAsThePolicySays() async {
        let p = Self.provider(pkce: .forbidden) {
            $0.scopeParameter = "user_scope"
            $0.scope = "users:read"
            $0.authorizeParameters = ["duration": "permanent"]
        }
        let scoped = [("user_scope", "users:read"), ("duration", "permanent")]
        #expect(
            T.redirectQuery(await Self.authorize(p, [("scope", "users:read"), ("duration", "permanent")]))["error"] == "invalid_request")
        #expect(T.redirectQuery(await Self.authorize(p, [("user_scope", "users:read")]))["error"] == "invalid_request")
        let pkce = [("code_challenge", T.challenge), ("code_challenge_method", "S256")]
        #expect(T.redirectQuery(await Self.authorize(p, scoped + pkce))["error"] == "invalid_request")
        #expect(T.redirectQuery(await Self.authorize(p, scoped))["code"] != nil)
        #expect(
            p.ledger.violations == [
                "authorize: user_scope is missing, not users:read", "authorize: duration is missing, not permanent",
                "authorize: PKCE sent to a provider without it",
            ])
        let required = Self.provider(pkce: .required) { _ in }
        #expect(T.redirectQuery(await Self.authorize(required))["error"] == "invalid_request")
        #expect(required.ledger.violations == ["authorize: code_challenge is required."])
    }

    @Test func httpBasicIsDemandedAndCredentialsInTheBodyAreRefusedInTheProvidersErrorShape() async throws {
        let p = Self.provider {
            $0.clientAuthentication = .basic
            $0.errorAnswer = { (.ok, "{\"ok\":false,\"error\":\"\($0)\"}") }
        }
        let code = try #require(await Self.code(p))
        let inBody = await Self.post(
            p, "/idp.example/oauth/token", contentType: Self.formType,
            body: Self.form([
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", T.callback),
                ("client_id", "acme-client-id"), ("client_secret", T.secret),
            ]))
        #expect(inBody.status.code == 400)
        #expect(String(decoding: inBody.body, as: UTF8.self) == "{\"ok\":false,\"error\":\"invalid_request\"}")
        #expect(p.ledger.violations == ["token: client_secret in the body, HTTP Basic wanted"])
        // A spent refresh token is the shape's invalid_grant, with the shape's status.
        let (_, refresh) = try await Self.connect(p)
        let refreshed = await Self.post(
            p, "/idp.example/oauth/refresh", headers: [("Authorization", Self.basic)], contentType: Self.formType,
            body: Self.form([("grant_type", "refresh_token"), ("refresh_token", try #require(refresh))]))
        #expect(refreshed.status.code == 200 && T.json(refreshed)["access_token"] != nil)
        let spent = await Self.post(
            p, "/idp.example/oauth/token", headers: [("Authorization", Self.basic)], contentType: Self.formType,
            body: Self.form([("grant_type", "refresh_token"), ("refresh_token", try #require(refresh))]))
        #expect(spent.status.code == 200)
        #expect(String(decoding: spent.body, as: UTF8.self) == "{\"ok\":false,\"error\":\"invalid_grant\"}")
        #expect(p.ledger.violations.count == 1)
    }

    @Test func credentialsInTheBodyAreDemandedWhenSaid() async throws {
        let p = Self.provider { $0.clientAuthentication = .body }
        let code = try #require(await Self.code(p))
        let reply = await Self.post(
            p, "/idp.example/oauth/token", headers: [("Authorization", Self.basic)], contentType: Self.formType,
            body: Self.form([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", T.callback)]))
        #expect(reply.status.code == 400)
        #expect(p.ledger.violations == ["token: Authorization sent, credentials belong in the body"])
    }

    @Test func aJSONTokenRequestIsDemandedAndReadAndTheAnswerIsTheProvidersOwn() async throws {
        let p = Self.provider(refreshTokens: .keep) {
            $0.clientAuthentication = .basic
            $0.tokenRequestFormat = .json
            $0.tokenAnswer = { issued in
                "{\"ok\":true,\"authed_user\":{\"access_token\":\"\(issued.accessToken)\",\"expires_in\":\(issued.expiresIn)"
                    + (issued.refreshToken.map { ",\"refresh_token\":\"\($0)\"" } ?? "") + "},\"refreshing\":\(issued.refreshing)}"
            }
        }
        let code = try #require(await Self.code(p))
        let asForm = await Self.post(
            p, "/idp.example/oauth/token", headers: [("Authorization", Self.basic)], contentType: Self.formType,
            body: Self.form([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", T.callback)]))
        #expect(asForm.status.code == 400)
        #expect(p.ledger.violations == ["token: Content-Type application/x-www-form-urlencoded, not application/json"])
        let code2 = try #require(await Self.code(p))
        let body = "{\"grant_type\":\"authorization_code\",\"code\":\"\(code2)\",\"redirect_uri\":\"\(T.callback)\"}"
        let answer = await Self.post(
            p, "/idp.example/oauth/token", headers: [("Authorization", Self.basic)], contentType: "application/json",
            body: body)
        #expect(answer.status.code == 200)
        let user = try #require(T.json(answer)["authed_user"] as? [String: Any])
        #expect(user["access_token"] as? String == p.accessTokens.last && user["refresh_token"] != nil)
        #expect(T.json(answer)["refreshing"] as? Bool == false)
        let refresh = "{\"grant_type\":\"refresh_token\",\"refresh_token\":\"\(try #require(user["refresh_token"] as? String))\"}"
        let refreshed = await Self.post(
            p, "/idp.example/oauth/refresh", headers: [("Authorization", Self.basic)],
            contentType: "application/json", body: refresh)
        #expect(T.json(refreshed)["refreshing"] as? Bool == true)
        // Google's policy: the refresh token stays, so the answer carries none.
        #expect((T.json(refreshed)["authed_user"] as? [String: Any])?["refresh_token"] == nil)
        // A code is exchanged only at the token endpoint, never at the refresh endpoint.
        let code3 = try #require(await Self.code(p))
        let wrongPlace = await Self.post(
            p, "/idp.example/oauth/refresh", headers: [("Authorization", Self.basic)], contentType: "application/json",
            body: "{\"grant_type\":\"authorization_code\",\"code\":\"\(code3)\",\"redirect_uri\":\"\(T.callback)\"}")
        #expect(T.json(wrongPlace)["error"] as? String == "unsupported_grant_type")
        #expect(p.ledger.violations.count == 1)
    }

    @Test func headerFieldsAreDemandedOfEveryCall() async throws {
        let p = Self.provider { $0.headers = ["Notion-Version": "2025-09-03"] }
        let code = try #require(await Self.code(p))
        let reply = await Self.post(
            p, "/idp.example/oauth/token", headers: [("Authorization", Self.basic)], contentType: Self.formType,
            body: Self.form([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", T.callback)]))
        #expect(reply.status.code == 400)
        let (access, _) = try await Self.connect(p, headers: [("Notion-Version", "2025-09-03")])
        #expect(await Self.send(p, .GET, "/api.example/me", headers: [("Authorization", "Bearer " + access)]).status.code == 400)
        #expect(
            await Self.send(
                p, .GET, "/api.example/me",
                headers: [
                    ("Authorization", "Bearer " + access),
                    ("Notion-Version", "2025-09-03"),
                ]
            ).status.code == 200)
        #expect(
            p.ledger.violations == ["token: Notion-Version is missing, not 2025-09-03", "user: Notion-Version is missing, not 2025-09-03"])
    }

    @Test(arguments: [Quirks.UserRequest.header(scheme: "OAuth"), .jsonPost(containing: "viewer"), .introspection])
    func theUserEndpointMustBeAskedItsWay(_ asked: Quirks.UserRequest) async throws {
        let p = Self.provider { $0.userRequest = asked }
        p.set { $0.userBody = "{\"data\":{\"viewer\":{\"id\":\"u-1\"}}}" }
        let (access, _) = try await Self.connect(p)
        let right: Response
        switch asked {
        case .header(let scheme):
            right = await Self.send(p, .GET, "/api.example/me", headers: [("Authorization", scheme + " " + access)])
        case .jsonPost(let containing):
            right = await Self.post(
                p, "/api.example/me", headers: [("Authorization", "Bearer " + access)], contentType: "application/json",
                body: "{\"query\":\"{ \(containing) { id name } }\"}")
        case .introspection:
            right = await Self.post(
                p, "/api.example/me", contentType: Self.formType,
                body: Self.form([("token", access), ("client_id", "acme-client-id"), ("client_secret", T.secret)]))
        }
        #expect(right.status.code == 200)
        #expect(String(decoding: right.body, as: UTF8.self) == "{\"data\":{\"viewer\":{\"id\":\"u-1\"}}}")
        // A plain Bearer GET is not this provider's way.
        let plain = await Self.send(p, .GET, "/api.example/me", headers: [("Authorization", "Bearer " + access)])
        #expect(plain.status.code == 400 || plain.status.code == 401)
        #expect(p.ledger.violations.count == 1)
        // An unknown token is still refused, asked the right way.
        if case .header(let scheme) = asked {
            #expect(await Self.send(p, .GET, "/api.example/me", headers: [("Authorization", scheme + " nope")]).status.code == 401)
        }
    }

    @Test func revocationAsABareBearerTokenAnswersTheProvidersWay() async throws {
        let p = Self.provider {
            $0.revocation = .bearer
            $0.revokeAnswer = (.ok, "null")
        }
        let (access, _) = try await Self.connect(p)
        let withBody = await Self.post(
            p, "/idp.example/oauth/revoke", headers: [("Authorization", "Bearer " + access)],
            contentType: Self.formType, body: Self.form([("token", access)]))
        #expect(withBody.status.code == 400)
        let reply = await Self.post(p, "/idp.example/oauth/revoke", headers: [("Authorization", "Bearer " + access)])
        #expect(reply.status.code == 200 && String(decoding: reply.body, as: UTF8.self) == "null")
        #expect(reply.headers["Content-Type"] == "application/json")
        #expect(p.ledger.revoked == [access])
        #expect(p.ledger.violations == ["revoke: a Bearer token and no body wanted"])
        // Revoked: the user endpoint no longer knows the token.
        #expect(await Self.send(p, .GET, "/api.example/me", headers: [("Authorization", "Bearer " + access)]).status.code == 401)
    }

    @Test func revocationAsJSONTakesTheCredentialsAsTheTokenEndpointDoes() async throws {
        let p = Self.provider {
            $0.clientAuthentication = .basic
            $0.revocation = .json
        }
        let (_, refresh) = try await Self.connect(p)
        let token = try #require(refresh)
        let unauthenticated = await Self.post(
            p, "/idp.example/oauth/revoke", contentType: "application/json", body: "{\"token\":\"\(token)\"}")
        #expect(unauthenticated.status.code == 400)
        let reply = await Self.post(
            p, "/idp.example/oauth/revoke", headers: [("Authorization", Self.basic)], contentType: "application/json",
            body: "{\"token\":\"\(token)\"}")
        #expect(reply.status.code == 200)
        #expect(p.ledger.revoked == [token])
        #expect(p.ledger.violations == ["revoke: client credentials wanted"])
    }

    @Test(arguments: [Quirks.RevocationClient.none, .clientID, .credentials])
    func revocationAsAFormNamesTheTokenUnderItsParameterWithTheClientAsked(_ client: Quirks.RevocationClient) async throws {
        let p = Self.provider { $0.revocation = .form(parameter: "access_token", client: client) }
        let (access, _) = try await Self.connect(p)
        let identification: [(String, String)] =
            switch client {
            case .none: []
            case .clientID: [("client_id", "acme-client-id")]
            case .credentials: [("client_id", "acme-client-id"), ("client_secret", T.secret)]
            }
        let wrongParameter = await Self.post(
            p, "/idp.example/oauth/revoke", contentType: Self.formType,
            body: Self.form([("token", access)] + identification))
        #expect(wrongParameter.status.code == 400)
        let tooMuch = await Self.post(
            p, "/idp.example/oauth/revoke", contentType: Self.formType,
            body: Self.form(
                [("access_token", access), ("client_id", "acme-client-id"), ("client_secret", client == .credentials ? "wrong" : T.secret)])
        )
        #expect(tooMuch.status.code == 400)
        let reply = await Self.post(
            p, "/idp.example/oauth/revoke", contentType: Self.formType,
            body: Self.form([("access_token", access)] + identification))
        #expect(reply.status.code == 200)
        #expect(p.ledger.revoked == [access])
        #expect(p.ledger.violations.count == 2)
    }

    @Test func theProvidersEntryNamesOnlyTheEndpointsItHas() {
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: T.secret)
        configuration.paths = OAuth2Dialect.Paths(authorize: "/a", token: "/t", refresh: "/r", user: nil, revoke: nil)
        let entry = FakeOAuth2Provider(configuration).providerEntry
        #expect(entry.contains("\"refresh_url\": \"http://127.0.0.1:") && entry.contains("/r\""))
        #expect(!entry.contains("user_url") && !entry.contains("revoke_url"))
    }
}
