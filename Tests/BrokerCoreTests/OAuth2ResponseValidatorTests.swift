import BrokerCore
import Testing

/// The guard at every step: each failure is named, nothing secret is echoed, real success formats pass.
struct OAuth2ResponseValidatorTests {
    private static let step = "token_exchange"

    /// The reason of the upstream error that validating `response` throws, or nil when it passes.
    private func failure(_ response: UpstreamResponse) -> String? {
        do {
            _ = try OAuth2ResponseValidator.tokenGrant(from: response, step: Self.step)
            return nil
        } catch {
            guard case .upstreamError(let step, let reason) = error, step == Self.step else { return "unexpected \(error)" }
            #expect(!reason.contains("SENTINEL"), "the reason echoes a secret: \(reason)")
            #expect(!error.message.contains("SENTINEL"))
            return reason
        }
    }

    @Test func serverErrorNamesTheStatus() throws {
        let reason = try #require(failure(ProviderWire.response(500, "text/plain", "internal error code-SENTINEL")))
        #expect(reason.contains("HTTP 500"))
        #expect(reason.contains("not a 2xx"))
    }

    @Test func weiboInvalidGrantNamesErrorAndCodeButNotTheDescription() throws {
        let reason = try #require(failure(ProviderWire.weiboInvalidGrant(code: "code-SENTINEL-1")))
        #expect(reason.contains("HTTP 400"))
        #expect(reason.contains("invalid_grant (21325)"))
        #expect(!reason.contains("invalid authorization code"))
    }

    @Test func weiboInvalidClientWith401() throws {
        let reason = try #require(failure(ProviderWire.weiboInvalidClient))
        #expect(reason.contains("HTTP 401"))
        #expect(reason.contains("invalid_client (21324)"))
    }

    @Test func githubErrorWithHTTP200IsAnError() throws {
        let reason = try #require(failure(ProviderWire.githubBadVerificationCode))
        #expect(reason == "HTTP 200 with error bad_verification_code")
    }

    @Test func weiboStringErrorCodeWithHTTP200IsAnError() throws {
        let body = #"{"request":"/statuses/home_timeline.json","error_code":"20502","error":"Auth failed!"}"#
        let reason = try #require(failure(ProviderWire.response(200, "text/plain;charset=UTF-8", body)))
        #expect(reason.contains("error Auth failed! (20502)"))
    }

    @Test func errorCodeAloneIsAnErrorEvenBesideAnAccessToken() throws {
        let body = #"{"access_token":"access-SENTINEL","error_code":21327}"#
        let reason = try #require(failure(ProviderWire.response(200, "application/json", body)))
        #expect(reason.contains("error_code 21327"))
    }

    @Test func providerErrorTextThatIsNotPlainIsNotShown() throws {
        let body = #"{"error":"<script>code-SENTINEL-1</script>"}"#
        let reason = try #require(failure(ProviderWire.response(400, "application/json", body)))
        #expect(reason.contains("HTTP 400"))
        #expect(!reason.contains("script"))
    }

    @Test(arguments: ["", "   \r\n"])
    func emptyBodyIsNamed(body: String) throws {
        let reason = try #require(failure(ProviderWire.response(200, "application/json", body)))
        #expect(reason.contains("empty body"))
    }

    @Test func htmlBodyIsNotJSON() throws {
        let page = "<!DOCTYPE html><html><body>Sign in code-SENTINEL-1</body></html>"
        let reason = try #require(failure(ProviderWire.response(200, "text/html; charset=UTF-8", page)))
        #expect(reason == "the body is not JSON (text/html)")
    }

    @Test func brokenJSONIsNamed() throws {
        let reason = try #require(failure(ProviderWire.response(200, "application/json", #"{"access_token":"access-SENTINEL""#)))
        #expect(reason.contains("not valid JSON"))
    }

    @Test func jsonArrayIsNotAnObject() throws {
        let reason = try #require(failure(ProviderWire.response(200, "application/json", #"[{"access_token":"access-SENTINEL"}]"#)))
        #expect(reason.contains("not an object"))
    }

    @Test(arguments: [#"{"token_type":"bearer","expires_in":3600}"#, #"{"access_token":"","expires_in":3600}"#, #"{"access_token":42}"#])
    func jsonWithoutAnAccessTokenIsNamed(body: String) throws {
        let reason = try #require(failure(ProviderWire.response(200, "application/json", body)))
        #expect(reason.contains("no access_token"))
    }

    @Test func expiresInThatIsNotANumberIsNamed() throws {
        let body = #"{"access_token":"access-SENTINEL","expires_in":"soon"}"#
        let reason = try #require(failure(ProviderWire.response(200, "application/json", body)))
        #expect(reason.contains("expires_in"))
    }

    @Test(arguments: [
        ("-1", "expires_in is negative"), ("\"-3600\"", "expires_in is negative"),
        ("-9223372036854775808", "expires_in is negative"),
        ("9223372036854775808", "expires_in is not a whole number of seconds"),
        ("99999999999999999999", "expires_in is not a whole number of seconds"),
        ("1e300", "expires_in is not a whole number of seconds"), ("3600.5", "expires_in is not a whole number of seconds"),
        ("true", "expires_in is not a whole number of seconds"), ("[3600]", "expires_in is not a whole number of seconds"),
    ])
    func expiresInOutOfRangeIsNamed(value: String, reason expected: String) throws {
        let body = #"{"access_token":"access-SENTINEL","expires_in":"# + value + "}"
        #expect(failure(ProviderWire.response(200, "application/json", body)) == expected)
    }

    @Test(arguments: [
        ("9223372036854775807", 315_360_000), ("\"9223372036854775807\"", 315_360_000), ("2147483647", 315_360_000),
        ("315360000", 315_360_000), ("0", 0), ("1e3", 1000),
    ])
    func expiresInBeyondTenYearsIsClamped(value: String, expected: Int) throws {
        let body = #"{"access_token":"t","expires_in":"# + value + "}"
        let grant = try OAuth2ResponseValidator.tokenGrant(from: ProviderWire.response(200, "application/json", body), step: Self.step)
        #expect(grant.expiresIn == expected)
    }

    @Test func tokensAndScopesTooLongOrWithControlCharactersAreNamed() throws {
        let long = String(repeating: "A", count: 16_385)
        let cases = [
            (#"{"access_token":""# + long + #""}"#, "access_token is longer than 16384 bytes"),
            (#"{"access_token":"t","refresh_token":""# + long + #""}"#, "refresh_token is longer than 16384 bytes"),
            (#"{"access_token":"tok\r\nX-Evil: 1"}"#, "access_token has control characters"),
            (#"{"access_token":"t","scope":""# + String(repeating: "s ", count: 2_100) + #""}"#, "scope is longer than 4096 bytes"),
        ]
        for (body, expected) in cases {
            #expect(failure(ProviderWire.response(200, "application/json", body)) == expected)
        }
        let fits = #"{"access_token":""# + String(long.dropFirst()) + #"","screen_name":""# + String(repeating: "n", count: 257) + #""}"#
        let grant = try OAuth2ResponseValidator.tokenGrant(from: ProviderWire.response(200, "application/json", fits), step: Self.step)
        #expect(grant.accessToken.value.utf8.count == 16_384)
        #expect(grant.screenName == nil)  // a display name past 256 bytes is dropped, not stored
    }

    @Test func weiboSuccessAsTextPlainIsRead() throws {
        let grant = try OAuth2ResponseValidator.tokenGrant(from: ProviderWire.weiboToken(accessToken: "2.00abc"), step: Self.step)
        #expect(grant.accessToken.value == "2.00abc")
        #expect(grant.uid == "3733034601")
        #expect(grant.expiresIn == 157_679_999)
        #expect(grant.refreshToken == nil)
    }

    @Test func githubDefaultFormBodyIsRead() throws {
        let grant = try OAuth2ResponseValidator.tokenGrant(from: ProviderWire.githubTokenForm(accessToken: "gho_16C7e42F"), step: Self.step)
        #expect(grant.accessToken.value == "gho_16C7e42F")
        #expect(grant.scope == "repo,gist")
        #expect(grant.tokenType == "bearer")
        #expect(grant.expiresIn == nil)
    }

    @Test func githubFormBodyLabelledJSONIsStillRead() throws {
        let response = ProviderWire.response(200, "application/json", "access_token=gho_x&scope=&token_type=bearer")
        #expect(try OAuth2ResponseValidator.tokenGrant(from: response, step: Self.step).accessToken.value == "gho_x")
    }

    @Test func googleJSONWithRefreshTokenIsRead() throws {
        let response = ProviderWire.googleToken(accessToken: "ya29.a0", refreshToken: "1//xEoDL4iW")
        let grant = try OAuth2ResponseValidator.tokenGrant(from: response, step: Self.step)
        #expect(grant.refreshToken?.value == "1//xEoDL4iW")
        #expect(grant.expiresIn == 3920)
        #expect(grant.tokenType == "Bearer")
        #expect(grant.uid == nil)
    }

    @Test func numericUIDAndStringExpiryAreAccepted() throws {
        let body = #"{"access_token":"t","expires_in":"86400","uid":3733034601,"error":null}"#
        let grant = try OAuth2ResponseValidator.tokenGrant(from: ProviderWire.response(200, nil, body), step: Self.step)
        #expect(grant.uid == "3733034601")
        #expect(grant.expiresIn == 86400)
    }

    @Test func int64UIDKeepsEveryDigitAndABooleanUIDIsIgnored() throws {
        let big = #"{"access_token":"t","uid":9007199254740993}"#
        #expect(
            try OAuth2ResponseValidator.tokenGrant(from: ProviderWire.response(200, nil, big), step: Self.step).uid == "9007199254740993")
        let boolean = #"{"access_token":"t","uid":true}"#
        #expect(try OAuth2ResponseValidator.tokenGrant(from: ProviderWire.response(200, nil, boolean), step: Self.step).uid == nil)
    }

    @Test func userInfoErrorWithHTTP200IsRefused() {
        let response = ProviderWire.response(
            200, "text/plain", #"{"error":"access_denied","error_code":21330,"request":"/2/account/get_uid.json"}"#)
        #expect(throws: BrokerError.upstreamError(step: "user_info", reason: "HTTP 200 with error access_denied (21330)")) {
            try OAuth2ResponseValidator.jsonObject(from: response, step: "user_info")
        }
    }

    @Test func userInfoDoesNotAcceptAFormBody() {
        let response = ProviderWire.response(200, "text/plain", "id=1&login=octocat")
        #expect(throws: BrokerError.upstreamError(step: "user_info", reason: "the body is not JSON (text/plain)")) {
            try OAuth2ResponseValidator.jsonObject(from: response, step: "user_info")
        }
    }
}
