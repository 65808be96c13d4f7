import BrokerCore
import Testing

/// The providers file's OAuth 2.0 quirk keys: each reaches the configuration, and each bad value stops start-up naming its key.
struct ProvidersFileQuirkTests {
    static let environment = ["ACME_SECRET": "acme-secret-SENTINEL", "SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s"]

    private func load(_ file: String) throws(ProviderConfigurationError) -> ProviderRegistry {
        try ProviderRegistry.load(environment: Self.environment, providersFile: Array(file.utf8))
    }

    private func loadError(_ file: String) -> ProviderConfigurationError? {
        do {
            _ = try load(file)
            return nil
        } catch {
            return error
        }
    }

    /// A custom provider with `settings` spliced into its entry.
    private func acme(_ settings: String) -> String {
        #"{"providers": {"acme": {"kind": "oauth2", "client_id": "acme", "client_secret": "${ACME_SECRET}", "#
            + #""authorize_url": "https://acme.example/authorize", "token_url": "https://acme.example/token", "#
            + #""user_url": "https://acme.example/me"\#(settings.isEmpty ? "" : ", " + settings)}}}"#
    }

    @Test func everyQuirkKeyReachesTheConfiguration() throws {
        let file = acme(
            #"""
            "token_request_format": "json", "token_path": "result", "token_user_id_field": ["team.id", "user.id"],
            "token_user_name_field": "user.name", "user_id_field": "data.viewer.id", "user_name_field": "data.viewer.name",
            "user_auth_scheme": "OAuth", "user_request_body": "{\"query\":\"{ viewer { id } }\"}", "user_introspection": false,
            "refresh_url": "https://acme.example/refresh", "refresh_token_rotates": true, "scope_param": "user_scope",
            "revoke_url": "https://acme.example/revoke", "revoke_request_format": "bearer", "revoke_token": "access_token",
            "revoke_client_auth": "client_id", "request_headers": {"Acme-Version": "2025-01", "User-Agent": "acme-broker/1"}
            """#)
        let acme = try #require(try load(file).provider(named: "acme"))
        #expect(acme.tokenRequestFormat == .json)
        #expect(
            acme.tokenAnswer == TokenAnswerLayout(tokensAt: "result", userIDFields: ["team.id", "user.id"], userNameField: "user.name"))
        #expect(acme.userIDFields == ["data.viewer.id"])
        #expect(
            acme.userRequest
                == UserInfoRequest(authScheme: "OAuth", jsonBody: #"{"query":"{ viewer { id } }"}"#, userNameField: "data.viewer.name"))
        #expect(acme.refreshURL == "https://acme.example/refresh")
        #expect(acme.refreshTokenRotates)
        #expect(acme.scopeParameter == "user_scope")
        #expect(acme.revocationStyle == .bearer && acme.revokesAccessToken)
        #expect(!acme.revokeAuthenticatesClient && acme.revokeSendsClientID)
        #expect(acme.requestHeaders.map { "\($0.0): \($0.1)" } == ["Acme-Version: 2025-01", "User-Agent: acme-broker/1"])
        #expect(acme.isConfigured)
    }

    @Test func aCustomProviderNamedInItsTokenAnswerNeedsNoUserEndpoint() throws {
        let file = #"""
            {"providers": {"acme": {"kind": "oauth2", "client_id": "acme", "client_secret": "${ACME_SECRET}",
                "authorize_url": "https://acme.example/authorize", "token_url": "https://acme.example/token",
                "token_user_id_field": "member.id"}}}
            """#
        #expect(try load(file).provider(named: "acme")?.tokenAnswer.userIDFields == ["member.id"])
        let unnamed = file.replacingOccurrences(of: #""token_user_id_field": "member.id""#, with: #""token_user_id_field": null"#)
        #expect(loadError(unnamed)?.key == "user_url")
    }

    @Test func nullSaysAPresetsTokenAnswerNamesNoUserAndRevokeClientAuthTakesBooleansToo() throws {
        let file =
            #"{"providers": {"slack": {"token_user_id_field": null, "user_url": "https://slack.example/me", "revoke_client_auth": true}}}"#
        let slack = try #require(try load(file).provider(named: "slack"))
        #expect(slack.tokenAnswer.userIDFields == [])
        #expect(slack.tokenAnswer.tokensAt == "authed_user")
        #expect(slack.revokeAuthenticatesClient && !slack.revokeSendsClientID)
    }

    @Test(arguments: [
        (#""token_request_format": "xml""#, "token_request_format"),
        (#""token_request_format": 1"#, "token_request_format"),
        (#""token_path": "a..b""#, "token_path"),
        (#""token_user_id_field": []"#, "token_user_id_field"),
        (#""token_user_id_field": ["a", "b", "c", "d", "e"]"#, "token_user_id_field"),
        (#""token_user_id_field": ["a", 1]"#, "token_user_id_field"),
        (#""token_user_id_field": "id; drop""#, "token_user_id_field"),
        (#""user_id_field": ["a", "b b"]"#, "user_id_field"),
        (#""user_name_field": 7"#, "user_name_field"),
        (#""user_auth_scheme": "Bearer token""#, "user_auth_scheme"),
        (#""user_auth_scheme": """#, "user_auth_scheme"),
        (#""user_request_body": "not json""#, "user_request_body"),
        (#""user_request_body": "[1]""#, "user_request_body"),
        (#""user_introspection": "yes""#, "user_introspection"),
        (#""refresh_url": "ftp://acme.example/refresh""#, "refresh_url"),
        (#""refresh_token_rotates": 1"#, "refresh_token_rotates"),
        (#""scope_param": "state""#, "scope_param"),
        (#""scope_param": "a b""#, "scope_param"),
        (#""scope_param": "user_scope", "authorize_params": {"user_scope": "x"}"#, "authorize_params"),
        (#""revoke_request_format": "query""#, "revoke_request_format"),
        (#""revoke_token": "id_token""#, "revoke_token"),
        (#""revoke_client_auth": "secret""#, "revoke_client_auth"),
        (#""request_headers": ["x"]"#, "request_headers"),
        (#""request_headers": {"Authorization": "Bearer x"}"#, "request_headers"),
        (#""request_headers": {"content-type": "text/plain"}"#, "request_headers"),
        (#""request_headers": {"Bad Name": "x"}"#, "request_headers"),
        (#""request_headers": {"X-Line": "a\r\nInjected: 1"}"#, "request_headers"),
        (#""request_headers": {"X-Empty": ""}"#, "request_headers"),
        (#""request_headers": {"X-Number": 1}"#, "request_headers"),
        (#""resource_urls": ["https://acme.example/sites"]"#, "resource_urls"),
        (#""resource_urls": {"sites": "ftp://acme.example/sites"}"#, "resource_urls"),
        (#""resource_urls": {"access_token": "https://acme.example/sites"}"#, "resource_urls"),
        (#""resource_urls": {"id_token": "https://acme.example/sites"}"#, "resource_urls"),
        (#""resource_urls": {"a b": "https://acme.example/sites"}"#, "resource_urls"),
        (#""resource_urls": {"sites": {"url": "https://acme.example/sites", "fields": []}}"#, "resource_urls"),
        (#""resource_urls": {"sites": {"href": "https://acme.example/sites"}}"#, "resource_urls"),
        (
            #""resource_urls": {"a": "https://x.example", "b": "https://x.example", "c": "https://x.example", "d": "https://x.example", "e": "https://x.example"}"#,
            "resource_urls"
        ),
    ])
    func aBadValueNamesItsKey(setting: String, key: String) {
        let error = loadError(acme(setting))
        #expect(error?.provider == "acme" && error?.key == key, "\(setting) gave \(String(describing: error))")
        #expect(!(error?.description.contains("SENTINEL") ?? false))
    }

    @Test func theQuirkKeysAreForOAuth2ProvidersOnly() throws {
        let file = #"""
            {"providers": {"corp": {"kind": "oauth1", "client_id": "k", "client_secret": "s",
                "request_token_url": "https://corp.example/rt", "authorize_url": "https://corp.example/a",
                "access_token_url": "https://corp.example/at", "token_request_format": "json"}}}
            """#
        let error = try #require(loadError(file))
        #expect(error.key == "token_request_format" && error.message.contains("oauth2 providers only"))
        let twoFields = #"{"providers": {"twitter": {"user_id_field": ["id_str", "screen_name"]}}}"#
        #expect(loadError(twoFields)?.key == "user_id_field")
    }

    @Test func aHeaderValueMayComeFromTheEnvironmentAndIsNeverQuoted() throws {
        let file = acme(#""request_headers": {"X-Acme-Key": "${ACME_SECRET}"}"#)
        #expect(try load(file).provider(named: "acme")?.requestHeaders.first?.1 == "acme-secret-SENTINEL")
        let missing = acme(#""request_headers": {"X-Acme-Key": "${ACME_UNSET}"}"#)
        let error = try #require(loadError(missing))
        #expect(error.key == "request_headers" && error.message.contains("ACME_UNSET"))
    }
}
