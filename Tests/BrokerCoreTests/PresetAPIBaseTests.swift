import BrokerCore
import Testing

/// Every preset's API base for the proxy and how its calls carry the credential, as docs/providers.md lists them.
struct PresetAPIBaseTests {
    /// Each preset's documented base and placement; Salesforce has none (its `instance_url` differs per account).
    static let expected: [String: (base: String?, placement: ProxyCredentialPlacement.Token)] = [
        "asana": ("https://app.asana.com/api/1.0", .bearer), "atlassian": ("https://api.atlassian.com", .bearer),
        "bitbucket": ("https://api.bitbucket.org/2.0", .bearer), "box": ("https://api.box.com/2.0", .bearer),
        "discord": ("https://discord.com/api", .bearer), "dropbox": ("https://api.dropboxapi.com/2", .bearer),
        "figma": ("https://api.figma.com", .bearer), "github": ("https://api.github.com", .bearer),
        "gitlab": ("https://gitlab.com/api/v4", .bearer), "google": ("https://www.googleapis.com", .bearer),
        "hubspot": ("https://api.hubapi.com", .bearer), "linear": ("https://api.linear.app", .bearer),
        "linkedin": ("https://api.linkedin.com", .bearer), "microsoft": ("https://graph.microsoft.com", .bearer),
        "notion": ("https://api.notion.com/v1", .bearer), "reddit": ("https://oauth.reddit.com", .bearer),
        "salesforce": (nil, .bearer), "slack": ("https://slack.com/api", .bearer),
        "spotify": ("https://api.spotify.com", .bearer), "strava": ("https://www.strava.com/api/v3", .bearer),
        "tmdb": ("https://api.themoviedb.org/3", .tmdbSession), "twitch": ("https://api.twitch.tv/helix", .bearer),
        "twitter": ("https://api.twitter.com", .oauth1Signature), "weibo": ("https://api.weibo.com/2", .queryParameter("access_token")),
        "zoom": ("https://api.zoom.us/v2", .bearer), "okta": ("https://{org}.okta.com/api/v1", .bearer),
        "zendesk": ("https://{subdomain}.zendesk.com/api/v2", .bearer),
        "shopify": (
            "https://{shop}.myshopify.com/admin/api/2026-10",
            .header(APITokenHeader(name: "X-Shopify-Access-Token", format: "{access_token}"))
        ),
    ]

    @Test func everyPresetHasABaseTheProxyAcceptsOrADocumentedReasonForNone() throws {
        #expect(ProviderPresets.names == Self.expected.keys.sorted())
        for name in ProviderPresets.names {
            let preset = try #require(ProviderPresets.preset(named: name, environment: [:]))
            let expected = try #require(Self.expected[name])
            #expect(preset.apiBaseURL == expected.base, "\(name)")
            #expect(ProxyCredentialPlacement(provider: preset).token == expected.placement, "\(name)")
            // A base at the customer's own host is checked as an account's settings fill it.
            let sample = Dictionary(uniqueKeysWithValues: preset.accountSettings.map { ($0.name, "acme") })
            if let base = try preset.applyingSettings(sample).0.apiBaseURL {
                #expect(throws: Never.self, "\(name)") { try ProxyTarget.Base(base) }
                #expect(!preset.apiAllowPrivate, "\(name)")
            }
        }
    }

    @Test func gitLabsBaseFollowsGitlabURL() throws {
        let gitlab = try #require(ProviderPresets.preset(named: "gitlab", environment: ["GITLAB_URL": "https://git.example.com"]))
        #expect(gitlab.apiBaseURL == "https://git.example.com/api/v4")
        #expect(try ProxyTarget.Base(#require(gitlab.apiBaseURL)).prefix == "/api/v4")
    }

    @Test func microsoftKeepsGraphAsItsBaseWhenATenantIdMakesItOpenIDConnect() throws {
        let tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
        let microsoft = try #require(ProviderPresets.preset(named: "microsoft", environment: ["MICROSOFT_TENANT": tenant]))
        #expect(microsoft.kind == .oidc && microsoft.apiBaseURL == "https://graph.microsoft.com")
    }

    @Test func aProvidersFileSetsTheTokenParameterAndClientIdHeader() throws {
        let file = #"""
            {"providers": {"acme": {"kind": "oauth2", "client_id": "c", "client_secret": "s",
              "authorize_url": "https://acme.example/authorize", "token_url": "https://acme.example/token",
              "user_url": "https://api.acme.example/me", "api_base_url": "https://api.acme.example/v2",
              "api_token_param": "access_token", "api_client_id_header": "X-Client-Id",
              "request_headers": {"Acme-Version": "7"}}}}
            """#
        let registry = try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8))
        let acme = try #require(registry.provider(named: "acme"))
        #expect(
            ProxyCredentialPlacement(provider: acme)
                == ProxyCredentialPlacement(
                    token: .queryParameter("access_token"), clientIDHeader: "X-Client-Id", headers: [("Acme-Version", "7")]))
    }

    /// `api_token_header` and `api_token_format` place an OAuth 2.0 token as the provider reads it; a header alone carries
    /// the bare token, `Authorization` alone keeps Bearer, and a format alone changes the Authorization value.
    @Test func aProvidersFileSetsTheTokenHeaderAndFormat() throws {
        func placement(_ keys: String) throws -> ProxyCredentialPlacement.Token {
            let file = #"""
                {"providers": {"acme": {"kind": "oauth2", "client_id": "c", "client_secret": "s",
                  "authorize_url": "https://acme.example/authorize", "token_url": "https://acme.example/token",
                  "user_url": "https://api.acme.example/me", "api_base_url": "https://api.acme.example/v2", \#(keys)}}}
                """#
            let registry = try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8))
            return ProxyCredentialPlacement(provider: try #require(registry.provider(named: "acme"))).token
        }
        #expect(try placement(#""api_token_header": "X-Acme-Token""#) == .header(.init(name: "X-Acme-Token", format: "{access_token}")))
        #expect(
            try placement(#""api_token_header": "X-Acme-Token", "api_token_format": "token {access_token}""#)
                == .header(.init(name: "X-Acme-Token", format: "token {access_token}")))
        #expect(try placement(#""api_token_header": "Authorization""#) == .bearer)
        #expect(
            try placement(#""api_token_format": "token {access_token}""#)
                == .header(.init(name: "Authorization", format: "token {access_token}")))
        // The user endpoint takes the token the same way unless user_auth_scheme says otherwise.
        let file =
            #"{"providers": {"shopify": {"api_token_header": "X-Other"}, "zendesk": {"api_token_header": "X-Z", "user_auth_scheme": "Bearer"}}}"#
        let environment = ["SHOPIFY_CLIENT_ID": "i", "SHOPIFY_CLIENT_SECRET": "s", "ZENDESK_CLIENT_ID": "i", "ZENDESK_CLIENT_SECRET": "s"]
        let registry = try ProviderRegistry.load(environment: environment, providersFile: Array(file.utf8))
        #expect(registry.provider(named: "shopify")?.userRequest.tokenHeader == .init(name: "X-Other", format: "{access_token}"))
        #expect(registry.provider(named: "zendesk")?.userRequest.tokenHeader == nil)
        #expect(registry.provider(named: "zendesk")?.apiTokenHeader == .init(name: "X-Z", format: "{access_token}"))
    }

    /// Values the providers file refuses, each with the key it must name.
    static let refused: [(entry: String, key: String)] = [
        (#""api_client_id_header": "Authorization""#, "api_client_id_header"),
        (#""api_client_id_header": "cookie""#, "api_client_id_header"),
        (#""api_client_id_header": "Host""#, "api_client_id_header"),
        (#""api_client_id_header": "Connection""#, "api_client_id_header"),
        (#""api_client_id_header": "Broker-Account""#, "api_client_id_header"),
        (#""api_client_id_header": "Client Id""#, "api_client_id_header"),
        (#""api_client_id_header": "X-Id\r\nHost: evil""#, "api_client_id_header"),
        (#""api_client_id_header": 7"#, "api_client_id_header"),
        (#""api_token_param": "access token""#, "api_token_param"),
        (#""api_token_param": "a&b=c""#, "api_token_param"),
        (#""api_token_header": "Cookie""#, "api_token_header"),
        (#""api_token_header": "Host""#, "api_token_header"),
        (#""api_token_header": "Broker-Account""#, "api_token_header"),
        (#""api_token_header": "X Token""#, "api_token_header"),
        (#""api_token_header": "X-Token\r\nHost: evil""#, "api_token_header"),
        (#""api_token_header": 7"#, "api_token_header"),
        (#""api_token_header": "X-Token", "api_token_format": "token""#, "api_token_format"),
        (#""api_token_header": "X-Token", "api_token_format": "{access_token} {access_token}""#, "api_token_format"),
        (#""api_token_header": "X-Token", "api_token_format": "{access_token}\r\nHost: evil""#, "api_token_format"),
        (#""api_token_header": "X-Token", "api_token_param": "access_token""#, "api_token_header"),
        (#""api_token_header": "X-Client-Id", "api_client_id_header": "X-Client-Id""#, "api_client_id_header"),
    ]

    @Test("Refused", arguments: refused)
    func refuses(entry: String, key: String) {
        let file = #"{"providers": {"github": {"# + entry + "}}}"
        let environment = ["GITHUB_CLIENT_ID": "id", "GITHUB_CLIENT_SECRET": "secret"]
        #expect {
            try ProviderRegistry.load(environment: environment, providersFile: Array(file.utf8))
        } throws: { error in
            (error as? ProviderConfigurationError).map { $0.provider == "github" && $0.key == key } ?? false
        }
    }

    @Test func aTokenHeaderIsRefusedWhereTheKindPlacesTheCredentialItself() {
        let file = #"{"providers": {"tmdb": {"api_token_header": "X-Token"}}}"#
        #expect {
            try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8))
        } throws: { error in
            (error as? ProviderConfigurationError).map { $0.provider == "tmdb" && $0.key == "api_token_header" } ?? false
        }
    }

    @Test func aTokenParameterIsRefusedWhereTheKindPlacesTheCredentialItself() {
        let file = #"{"providers": {"twitter": {"api_token_param": "access_token"}}}"#
        #expect {
            try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8))
        } throws: { error in
            (error as? ProviderConfigurationError).map { $0.provider == "twitter" && $0.key == "api_token_param" } ?? false
        }
    }
}
