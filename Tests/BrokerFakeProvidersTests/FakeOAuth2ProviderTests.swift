import BrokerCrypto
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

/// The OAuth 2.0 fake, called in process: what a real authorization server checks, it checks.
@Suite struct FakeOAuth2ProviderTests {
    static let secret = "CLIENT-SECRET-SENTINEL-0123456789"
    static let callback = "http://127.0.0.1:8080/callback"
    /// RFC 7636 Appendix B.
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    static func provider(_ change: (inout FakeOAuth2Provider.Configuration) -> Void = { _ in }) -> FakeOAuth2Provider {
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: secret)
        configuration.redirectURIs = [callback]
        change(&configuration)
        return FakeOAuth2Provider(configuration)
    }

    static func send(
        _ provider: FakeOAuth2Provider, _ method: HTTPMethod = .GET, _ target: String,
        headers: [(String, String)] = [], form: [(String, String)]? = nil
    ) async -> Response {
        let body = form.map { PercentEncoding.encodeForm($0) } ?? ""
        let fields = headers + (form == nil ? [] : [("Content-Type", "application/x-www-form-urlencoded")])
        return await provider.router.respond(to: .make(method, target, headers: fields, body: body))
    }

    static func authorizeTarget(_ extra: [(String, String)] = []) -> String {
        "/authorize?"
            + PercentEncoding.encodeForm(
                [
                    ("client_id", "acme-client-id"), ("redirect_uri", callback),
                    ("response_type", "code"), ("state", "xyz"),
                ] + extra)
    }

    /// The query of the redirect `response` makes.
    static func redirectQuery(_ response: Response) -> [String: String] {
        guard let location = response.headers["Location"], let query = location.split(separator: "?", maxSplits: 1).last else { return [:] }
        return Dictionary(URLEncodedForm.parse(String(query)).map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    static func json(_ response: Response) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
    }

    static func code(_ provider: FakeOAuth2Provider, challenge: String? = FakeOAuth2ProviderTests.challenge) async -> String? {
        let extra = challenge.map { [("code_challenge", $0), ("code_challenge_method", "S256")] } ?? []
        return redirectQuery(await send(provider, .GET, authorizeTarget(extra)))["code"]
    }

    static func exchange(
        _ provider: FakeOAuth2Provider, code: String, verifier: String? = FakeOAuth2ProviderTests.verifier,
        redirect: String = callback
    ) async -> Response {
        var form = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
            ("client_id", "acme-client-id"), ("client_secret", secret),
        ]
        if let verifier { form.append(("code_verifier", verifier)) }
        return await send(provider, .POST, "/token", form: form)
    }

    @Test func anUnknownClientOrRedirectURIIsShownAnErrorAndNeverRedirected() async {
        let p = Self.provider()
        for target in [
            "/authorize?client_id=other&redirect_uri=\(Self.callback)&response_type=code",
            "/authorize?client_id=acme-client-id&redirect_uri=https%3A%2F%2Fevil.example%2Fcb&response_type=code",
            "/authorize?client_id=acme-client-id&response_type=code",
        ] {
            let reply = await Self.send(p, .GET, target)
            #expect(reply.status.code == 400)
            #expect(reply.headers["Location"] == nil)
            #expect(reply.headers["Content-Type"] == "text/html; charset=utf-8")
        }
    }

    @Test func theRFC7636VectorExchangesOnceAndTheCodeIsSingleUse() async throws {
        let p = Self.provider()
        let start = await Self.send(p, .GET, Self.authorizeTarget([("code_challenge", Self.challenge), ("code_challenge_method", "S256")]))
        #expect(start.status.code == 302)
        let query = Self.redirectQuery(start)
        #expect(query["state"] == "xyz")
        let code = try #require(query["code"])
        let tokens = await Self.exchange(p, code: code)
        #expect(tokens.status.code == 200)
        #expect(tokens.headers["Cache-Control"] == "no-store")
        #expect(tokens.headers["Content-Type"] == "application/json;charset=UTF-8")
        let body = Self.json(tokens)
        #expect(body["token_type"] as? String == "bearer" && body["expires_in"] as? Int == 3600)
        #expect((body["access_token"] as? String)?.hasPrefix("ACME-ACCESS-SENTINEL-") == true)
        #expect(body["refresh_token"] is String)
        let again = await Self.exchange(p, code: code)
        #expect(again.status.code == 400 && Self.json(again)["error"] as? String == "invalid_grant")
        #expect(p.ledger.verifiers == [Self.verifier, Self.verifier])
    }

    @Test func pkceMistakesAreRefused() async {
        let p = Self.provider()
        // A wrong verifier; no verifier for a challenged code; a verifier for a code issued without a challenge (RFC 9700 §2.1.1).
        let wrong = await Self.exchange(p, code: await Self.code(p) ?? "", verifier: String(repeating: "a", count: 43))
        #expect(Self.json(wrong)["error"] as? String == "invalid_grant")
        let missing = await Self.exchange(p, code: await Self.code(p) ?? "", verifier: nil)
        #expect(Self.json(missing)["error"] as? String == "invalid_request")
        let downgrade = await Self.exchange(p, code: await Self.code(p, challenge: nil) ?? "")
        #expect(Self.json(downgrade)["error"] as? String == "invalid_grant")
        // plain is refused at authorize, back at the client (RFC 6749 §4.1.2.1).
        let plain = await Self.send(
            p, .GET, Self.authorizeTarget([("code_challenge", Self.challenge), ("code_challenge_method", "plain")]))
        #expect(Self.redirectQuery(plain)["error"] == "invalid_request")
        let required = Self.provider { $0.pkce = .required }
        #expect(Self.redirectQuery(await Self.send(required, .GET, Self.authorizeTarget()))["error"] == "invalid_request")
    }

    @Test func theRedirectURIMustBeTheOneTheCodeWasIssuedFor() async {
        let p = Self.provider { $0.redirectURIs = nil }
        let reply = await Self.exchange(p, code: await Self.code(p) ?? "", redirect: "http://127.0.0.1:8080/other")
        #expect(reply.status.code == 400 && Self.json(reply)["error"] as? String == "invalid_grant")
    }

    @Test func clientAuthenticationByBasicOrFormAndA401ForWrongCredentials() async {
        let p = Self.provider()
        let basic = "Basic " + Base64.encode(Array("acme-client-id:\(Self.secret)".utf8))
        let code = await Self.code(p) ?? ""
        let ok = await Self.send(
            p, .POST, "/token", headers: [("Authorization", basic)],
            form: [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Self.callback), ("code_verifier", Self.verifier),
            ])
        #expect(ok.status.code == 200)
        let wrongBasic = "Basic " + Base64.encode(Array("acme-client-id:nope".utf8))
        let refused = await Self.send(
            p, .POST, "/token", headers: [("Authorization", wrongBasic)], form: [("grant_type", "authorization_code")])
        #expect(refused.status.code == 401 && Self.json(refused)["error"] as? String == "invalid_client")
        #expect(refused.headers["WWW-Authenticate"]?.hasPrefix("Basic") == true)
        let none = await Self.send(p, .POST, "/token", form: [("grant_type", "authorization_code")])
        #expect(none.status.code == 401)
    }

    @Test func aRotatedRefreshTokenWorksOnceAndEndsTheOldAccessToken() async throws {
        let p = Self.provider()
        let first = Self.json(await Self.exchange(p, code: await Self.code(p) ?? ""))
        let access = try #require(first["access_token"] as? String), refresh = try #require(first["refresh_token"] as? String)
        #expect(await Self.send(p, .GET, "/user", headers: [("Authorization", "Bearer " + access)]).status.code == 200)
        let form = [
            ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "acme-client-id"), ("client_secret", Self.secret),
        ]
        let renewed = Self.json(await Self.send(p, .POST, "/token", form: form))
        let next = try #require(renewed["access_token"] as? String)
        #expect(renewed["refresh_token"] as? String != refresh)
        #expect(await Self.send(p, .GET, "/user", headers: [("Authorization", "Bearer " + access)]).status.code == 401)
        let user = await Self.send(p, .GET, "/user", headers: [("Authorization", "Bearer " + next)])
        #expect(String(decoding: user.body, as: UTF8.self) == #"{"id":4242,"login":"ada"}"#)
        let stale = await Self.send(p, .POST, "/token", form: form)
        #expect(Self.json(stale)["error"] as? String == "invalid_grant")
        #expect(p.ledger.stalePresentations == 1 && p.ledger.refreshCalls == 2)
    }

    @Test func aKeptRefreshTokenIsNotRepeatedAndRevokingItEndsTheGrant() async throws {
        let p = Self.provider()
        p.set { $0.refreshTokens = .keep }
        let first = Self.json(await Self.exchange(p, code: await Self.code(p) ?? ""))
        let refresh = try #require(first["refresh_token"] as? String)
        let form = [
            ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "acme-client-id"), ("client_secret", Self.secret),
        ]
        let renewed = Self.json(await Self.send(p, .POST, "/token", form: form))
        #expect(renewed["refresh_token"] == nil)
        let access = try #require(renewed["access_token"] as? String)
        #expect(await Self.send(p, .POST, "/revoke", form: [("token", refresh), ("token_type_hint", "refresh_token")]).status.code == 200)
        #expect(await Self.send(p, .GET, "/user", headers: [("Authorization", "Bearer " + access)]).status.code == 401)
        #expect(p.ledger.revoked == [refresh])
    }

    @Test func tokenAnswersCanOmitExpiresInCarryARefreshTokenLifetimeAndExtraFields() async throws {
        let p = Self.provider()
        p.set {
            $0.sendsExpiresIn = false
            $0.refreshTokenLifetime = 15_897_600
            $0.extraFields = ["instance_url": #""https://na1.example.com""#, "id_token": #""eyJ.e30.sig""#]
            $0.refreshExtraFields = ["signature": #""bmV3""#]
        }
        let first = Self.json(await Self.exchange(p, code: await Self.code(p) ?? ""))
        #expect(first["expires_in"] == nil && first["refresh_token_expires_in"] as? Int == 15_897_600)
        #expect(first["instance_url"] as? String == "https://na1.example.com" && first["id_token"] as? String == "eyJ.e30.sig")
        let refresh = try #require(first["refresh_token"] as? String)
        let form = [
            ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "acme-client-id"), ("client_secret", Self.secret),
        ]
        let renewed = Self.json(await Self.send(p, .POST, "/token", form: form))
        #expect(renewed["access_token"] is String && renewed["refresh_token_expires_in"] as? Int == 15_897_600)
        #expect(renewed["signature"] as? String == "bmV3" && renewed["instance_url"] == nil && renewed["id_token"] == nil)
        // The same switches from another process: `extra_fields` through /_fake/control.
        let controlled = Self.provider { $0.controlRoutes = true }
        let control = await Self.send(
            controlled, .POST, "/_fake/control", form: [("extra_fields", #"{"instance_url":"https://na2.example.com"}"#)])
        #expect(control.status.code == 200)
        let answer = Self.json(await Self.exchange(controlled, code: await Self.code(controlled) ?? ""))
        #expect(answer["instance_url"] as? String == "https://na2.example.com" && answer["expires_in"] as? Int == 3600)
        let refused = await Self.send(controlled, .POST, "/_fake/control", form: [("extra_fields", #"{"n":1}"#)])
        #expect(refused.status.code == 400)
    }

    @Test func theScopeAnswerFollowsWhatWasAskedLessTheWithheldScopes() async throws {
        let p = Self.provider { $0.controlRoutes = true }
        let asked = [("code_challenge", Self.challenge), ("code_challenge_method", "S256"), ("scope", "read write admin")]
        let code = try #require(Self.redirectQuery(await Self.send(p, .GET, Self.authorizeTarget(asked)))["code"])
        #expect(Self.json(await Self.exchange(p, code: code))["scope"] as? String == "read write admin")
        let control = await Self.send(p, .POST, "/_fake/control", form: [("withhold_scopes", "write,admin")])
        #expect(control.status.code == 200)
        let partial = try #require(Self.redirectQuery(await Self.send(p, .GET, Self.authorizeTarget(asked)))["code"])
        let answer = Self.json(await Self.exchange(p, code: partial))
        #expect(answer["scope"] as? String == "read")
        #expect(await Self.send(p, .POST, "/_fake/control", form: [("withhold_scopes", "none")]).status.code == 200)
        #expect(await Self.send(p, .POST, "/_fake/control", form: [("withhold_scopes", "")]).status.code == 400)
    }

    @Test func everyFailureAnswersAsDocumented() async {
        let expected: [(FakeOAuth2Provider.Failure, Int, String?)] = [
            (.serverError, 500, nil), (.html, 200, nil), (.empty, 200, nil), (.invalidGrant, 400, "invalid_grant"),
            (.noAccessToken, 200, nil), (.errorIn200, 200, "bad_verification_code"), (.rateLimited(retryAfter: "7"), 429, nil),
            (.echoingError, 400, "invalid_grant"),
        ]
        for (failure, status, error) in expected {
            let p = Self.provider()
            p.set { $0.exchangeFailure = failure }
            let reply = await Self.exchange(p, code: await Self.code(p) ?? "")
            #expect(reply.status.code == status, "\(failure)")
            if let error { #expect(Self.json(reply)["error"] as? String == error, "\(failure)") }
            #expect(Self.json(reply)["access_token"] == nil)
            if case .rateLimited = failure { #expect(reply.headers["Retry-After"] == "7") }
            if failure == .echoingError { #expect(String(decoding: reply.body, as: UTF8.self).contains(Self.secret)) }
        }
    }

    @Test func weiboSpeaksItsOwnDialect() async throws {
        let p = FakeOAuth2Provider(.weibo(clientSecret: Self.secret))
        let target = "/oauth2/authorize?client_id=1234567890&redirect_uri=\(Self.callback)&state=s1"
        let code = try #require(Self.redirectQuery(await Self.send(p, .GET, target))["code"])
        let tokens = await Self.send(
            p, .POST, "/oauth2/access_token",
            form: [
                ("client_id", "1234567890"), ("client_secret", Self.secret), ("grant_type", "authorization_code"),
                ("code", code), ("redirect_uri", Self.callback),
            ])
        #expect(tokens.headers["Content-Type"] == "text/plain;charset=UTF-8" && tokens.headers["Server"] == "weibo")
        let body = Self.json(tokens)
        #expect(body["uid"] as? String == "3733034601" && body["remind_in"] is String && body["isRealName"] as? String == "true")
        let access = try #require(body["access_token"] as? String)
        #expect(access.hasPrefix("2.00WEIBO-TOKEN-SENTINEL-"))
        let uid = await Self.send(p, .GET, "/2/account/get_uid.json?access_token=" + PercentEncoding.rfc3986(access))
        #expect(String(decoding: uid.body, as: UTF8.self) == #"{"uid":3733034601}"#)
        let revoked = await Self.send(p, .POST, "/oauth2/revokeoauth2", form: [("access_token", access)])
        #expect(String(decoding: revoked.body, as: UTF8.self) == #"{"result":"true"}"#)
        p.set { $0.deny = true }
        let denied = await Self.send(p, .GET, target)
        #expect(
            denied.headers["Location"] == Self.callback
                + "?error_uri=%2Foauth2%2Fauthorize&error=access_denied&error_description=user%20denied%20your%20request.&error_code=21330&state=s1"
        )
        let wrong = await Self.send(p, .POST, "/oauth2/access_token", form: [("client_id", "1234567890"), ("client_secret", "x")])
        #expect(wrong.status.code == 401 && Self.json(wrong)["error_code"] as? Int == 21324)
    }

    @Test func theConsentPageSaysItIsNoRealAccountAndItsAnswerRedirects() async throws {
        let p = Self.provider {
            $0.consent = .page(providerName: "Demo provider"); $0.pkce = .required
        }
        let page = await Self.send(p, .GET, Self.authorizeTarget([("code_challenge", Self.challenge), ("code_challenge_method", "S256")]))
        #expect(page.status.code == 200)
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains("Demo provider — not a real account"))
        #expect(!html.lowercased().contains("<script"))
        let csp = try #require(page.headers["Content-Security-Policy"])
        // No form-action: Chromium applies it to the whole redirect chain after the POST, which may leave the client.
        #expect(csp.contains("default-src 'none'") && !csp.contains("form-action"))
        #expect(csp.contains("style-src 'sha256-") && !csp.contains("script-src"))
        let id = try #require(html.range(of: "name=\"request\" value=\"").map { String(html[$0.upperBound...].prefix { $0 != "\"" }) })
        let approved = await Self.send(p, .POST, "/authorize", form: [("request", id), ("decision", "approve")])
        #expect(approved.status.code == 303)
        #expect(Self.redirectQuery(approved)["code"] != nil)
        let replayed = await Self.send(p, .POST, "/authorize", form: [("request", id), ("decision", "approve")])
        #expect(replayed.status.code == 400)
        let second = String(
            decoding: await Self.send(
                p, .GET,
                Self.authorizeTarget([
                    ("code_challenge", Self.challenge),
                    ("code_challenge_method", "S256"),
                ])
            ).body, as: UTF8.self)
        let other = try #require(
            second.range(of: "name=\"request\" value=\"").map { String(second[$0.upperBound...].prefix { $0 != "\"" }) })
        let denied = await Self.send(p, .POST, "/authorize", form: [("request", other), ("decision", "deny")])
        #expect(Self.redirectQuery(denied)["error"] == "access_denied" && Self.redirectQuery(denied)["state"] == "xyz")
    }

    @Test func theControlRoutesExistOnlyWhenConfigured() async {
        #expect(await Self.send(Self.provider(), .GET, "/_fake/stats").status.code == 404)
        let p = Self.provider { $0.controlRoutes = true }
        let set = await Self.send(p, .POST, "/_fake/control", form: [("deny", "true"), ("exchange_failure", "server_error")])
        #expect(set.status.code == 200)
        #expect(p.behaviour.deny && p.behaviour.exchangeFailure == .serverError)
        #expect(await Self.send(p, .POST, "/_fake/control", form: [("deny", "maybe")]).status.code == 400)
        let stats = Self.json(await Self.send(p, .GET, "/_fake/stats"))
        #expect(stats["token_calls"] as? Int == 0)
    }

    @Test func theControlRouteSetsTheUserRefreshTokensAndRevocationFailure() async throws {
        let p = Self.provider { $0.controlRoutes = true }
        let set = await Self.send(
            p, .POST, "/_fake/control",
            form: [
                ("uid", "5001"), ("refresh_tokens", "none"), ("revoke_failure", "503"),
                ("refresh_failure", "rate_limited:120"),
            ])
        #expect(set.status.code == 200)
        #expect(p.behaviour.users == .fixed("5001") && p.behaviour.refreshTokens == .none)
        #expect(p.behaviour.revokeFailure == .serviceUnavailable && p.behaviour.refreshFailure == .rateLimited(retryAfter: "120"))
        // The code is for user 5001, and its tokens come without a refresh token.
        let code = try #require(Self.redirectQuery(await Self.send(p, .GET, Self.authorizeTarget()))["code"])
        let tokens = Self.json(
            await Self.send(
                p, .POST, "/token",
                form: [
                    ("client_id", "acme-client-id"), ("client_secret", Self.secret), ("grant_type", "authorization_code"),
                    ("code", code), ("redirect_uri", Self.callback),
                ]))
        let access = try #require(tokens["access_token"] as? String)
        #expect(tokens["refresh_token"] == nil)
        let user = Self.json(await Self.send(p, .GET, "/user", headers: [("Authorization", "Bearer " + access)]))
        #expect(user["id"] as? Int == 5001)
        // A failing revocation is counted, answers 503 and leaves the token working.
        let refused = await Self.send(p, .POST, "/revoke", form: [("token", access)])
        #expect(refused.status.code == 503 && Self.json(refused)["error"] as? String == "temporarily_unavailable")
        #expect(p.revokeCalls == 1 && p.ledger.revoked.isEmpty)
        #expect(await Self.send(p, .GET, "/user", headers: [("Authorization", "Bearer " + access)]).status.code == 200)
        _ = await Self.send(p, .POST, "/_fake/control", form: [("revoke_failure", "none"), ("refresh_tokens", "keep")])
        #expect(p.behaviour.revokeFailure == nil && p.behaviour.refreshTokens == .keep)
        #expect(await Self.send(p, .POST, "/revoke", form: [("token", access)]).status.code == 200)
        #expect(await Self.send(p, .GET, "/user", headers: [("Authorization", "Bearer " + access)]).status.code == 401)
        for (name, value) in [
            ("uid", ""), ("refresh_tokens", "sometimes"), ("revoke_failure", "200"), ("refresh_failure", "rate_limited:soon"),
        ] {
            #expect(await Self.send(p, .POST, "/_fake/control", form: [(name, value)]).status.code == 400, "\(name)=\(value)")
        }
    }

    @Test func countingUsersMakeEverySignInAnotherAccount() async throws {
        var behaviour = FakeOAuth2Provider.Behaviour(dialect: .weibo)
        behaviour.users = .counting(from: 7)
        let p = FakeOAuth2Provider(.weibo(clientSecret: Self.secret), behaviour: behaviour)
        var uids: [String] = []
        for _ in 0..<2 {
            let code = try #require(
                Self.redirectQuery(await Self.send(p, .GET, "/oauth2/authorize?client_id=1234567890&redirect_uri=\(Self.callback)"))["code"]
            )
            let body = Self.json(
                await Self.send(
                    p, .POST, "/oauth2/access_token",
                    form: [
                        ("client_id", "1234567890"), ("client_secret", Self.secret), ("grant_type", "authorization_code"),
                        ("code", code), ("redirect_uri", Self.callback),
                    ]))
            uids.append(body["uid"] as? String ?? "-")
        }
        #expect(uids == ["7", "8"])
    }

    @Test func theSocketServesTheSameRoutes() async throws {
        try await withTestScope { scope in
            let p = try FakeOAuth2Provider.started(.rfc6749(clientSecret: Self.secret))
            scope.onEnd { await p.stop() }
            let reply = try #require(await TestHTTP.send(port: p.port, target: "/user"))
            #expect(reply.status == 401 && reply.header("WWW-Authenticate") == "Bearer error=\"invalid_token\"")
            #expect(p.providerEntry.contains("\"token_url\": \"\(p.baseURL)/token\""))
        }
    }
}
