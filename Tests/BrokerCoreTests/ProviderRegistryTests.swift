import BrokerCore
import Testing

/// Presets, environment credentials and the providers file with every error it can stop start-up with.
struct ProviderRegistryTests {
    private func load(_ file: String?, environment: [String: String] = [:]) throws(ProviderConfigurationError) -> ProviderRegistry {
        try ProviderRegistry.load(environment: environment, providersFile: file.map { Array($0.utf8) })
    }

    /// The error loading `file` throws, or nil.
    private func loadError(_ file: String, environment: [String: String] = [:]) -> ProviderConfigurationError? {
        do {
            _ = try load(file, environment: environment)
            return nil
        } catch {
            return error
        }
    }

    @Test func presetsWithoutCredentialsAreListedButNameTheirVariables() throws {
        let registry = try load(nil)
        #expect(registry.all.map(\.name) == ProviderPresets.names)
        #expect(ProviderPresets.names.count == 28)
        #expect(registry.all.allSatisfy { !$0.isConfigured })
        let weibo = try #require(registry.provider(named: "weibo"))
        #expect(!weibo.isConfigured)
        #expect(weibo.missingSettings == ["WEIBO_CLIENT_ID", "WEIBO_CLIENT_SECRET"])
        #expect(registry.provider(named: "twitter")?.missingSettings == ["TWITTER_CONSUMER_KEY", "TWITTER_CONSUMER_SECRET"])
        #expect(registry.provider(named: "tmdb")?.missingSettings == ["TMDB_API_KEY"])
        #expect(registry.provider(named: "acme") == nil)
    }

    @Test func environmentCredentialsConfigurePresetsAndStayRedacted() throws {
        let registry = try load(
            nil, environment: ["WEIBO_CLIENT_ID": "123", "WEIBO_CLIENT_SECRET": "s3cret-SENTINEL", "TMDB_API_KEY": "k-SENTINEL"])
        let weibo = try #require(registry.provider(named: "weibo"))
        #expect(weibo.isConfigured)
        #expect(weibo.clientID == "123")
        #expect(weibo.clientSecret?.value == "s3cret-SENTINEL")
        #expect(weibo.scopeSeparator == ",")
        #expect(!weibo.pkce)
        #expect(!String(describing: weibo).contains("SENTINEL"))
        #expect(registry.provider(named: "tmdb")?.isConfigured == true)
        #expect(registry.provider(named: "github")?.isConfigured == false)
    }

    @Test func emptyEnvironmentValueCountsAsMissing() throws {
        let registry = try load(nil, environment: ["GITHUB_CLIENT_ID": "", "GITHUB_CLIENT_SECRET": "x"])
        #expect(registry.provider(named: "github")?.missingSettings == ["GITHUB_CLIENT_ID"])
    }

    @Test func fileOverridesAPresetKeyByKeyAndInheritsTheRest() throws {
        let file = #"""
            {"providers": {"github": {
                "client_id": "file-id", "scopes": ["repo", "gist"], "token_endpoint_auth_method": "client_secret_basic",
                "authorize_url": "https://github.example/login/oauth/authorize", "pkce": false
            }}}
            """#
        let github = try #require(
            try load(file, environment: ["GITHUB_CLIENT_ID": "env-id", "GITHUB_CLIENT_SECRET": "env-secret"]).provider(named: "github"))
        #expect(github.clientID == "file-id")
        #expect(github.clientSecret?.value == "env-secret")
        #expect(github.scopes == ["repo", "gist"])
        #expect(github.clientAuthentication == .clientSecretBasic)
        #expect(github.authorizeURL == "https://github.example/login/oauth/authorize")
        #expect(github.tokenURL == "https://github.com/login/oauth/access_token")
        #expect(github.userIDFields == ["id"])
        #expect(!github.pkce)
    }

    @Test func customProviderWithEnvironmentReferences() throws {
        let file = #"""
            {"providers": {"acme": {
                "kind": "oauth2", "client_id": "acme-client", "client_secret": "${ACME_SECRET}",
                "authorize_url": "https://id.acme.example/authorize", "token_url": "https://id.acme.example/token",
                "user_url": "https://api.acme.example/me", "user_id_field": "user_id", "revoke_url": "https://id.acme.example/revoke",
                "scopes": ["profile"], "pkce": true, "authorize_params": {"prompt": "login", "audience": "${ACME_AUDIENCE}"}
            }}}
            """#
        let registry = try load(file, environment: ["ACME_SECRET": "acme-secret-SENTINEL", "ACME_AUDIENCE": "api"])
        let acme = try #require(registry.provider(named: "acme"))
        #expect(acme.kind == .oauth2)
        #expect(acme.isConfigured)
        #expect(acme.clientSecret?.value == "acme-secret-SENTINEL")
        #expect(acme.userIDFields == ["user_id"])
        #expect(acme.pkce)
        #expect(acme.scopeSeparator == " ")
        #expect(acme.clientAuthentication == .clientSecretPost)
        #expect(acme.extraAuthorizeParameters.map { "\($0.0)=\($0.1)" } == ["audience=api", "prompt=login"])
        #expect(registry.all.map(\.name) == (["acme"] + ProviderPresets.names).sorted())
    }

    @Test func missingEnvironmentVariableNamesProviderKeyAndVariable() throws {
        let file = #"{"providers": {"google": {"client_id": "gid", "client_secret": "${GOOGLE_SECRET_FROM_VAULT}"}}}"#
        let error = try #require(loadError(file, environment: ["GOOGLE_CLIENT_SECRET": "unused-SENTINEL"]))
        #expect(error.provider == "google")
        #expect(error.key == "client_secret")
        #expect(error.description.contains("GOOGLE_SECRET_FROM_VAULT"))
        #expect(error.description.contains("\"google\"") && error.description.contains("\"client_secret\""))
        #expect(!error.description.contains("SENTINEL"))
    }

    @Test(arguments: ["", "{", "not json", "{\"providers\": {\"acme\": }}"])
    func malformedJSONStopsStartUp(file: String) throws {
        let error = try #require(loadError(file))
        #expect(error.provider == nil && error.key == nil && error.message.hasPrefix("not valid JSON"))
    }

    @Test func aJSONMistakeIsPlacedByLineAndColumn() throws {
        let file = "{\"providers\": {\"acme\": {\"kind\": \"oauth2\",\n  \"client_id\": \"x\",, }}}"
        let error = try #require(loadError(file))
        #expect(error.message == "not valid JSON (line 2, column 20)")
    }

    @Test func wrongShapesNameWhereTheyAre() throws {
        #expect(loadError("[]")?.key == nil)
        #expect(loadError(#"{"provider": {}}"#)?.key == "provider")
        #expect(loadError(#"{"providers": []}"#)?.key == "providers")
        let notObject = try #require(loadError(#"{"providers": {"acme": "oauth2"}}"#))
        #expect(notObject.provider == "acme" && notObject.key == nil)
        #expect(loadError(#"{"providers": {"Bad:Name": {}}}"#)?.provider == "Bad:Name")
    }

    @Test func customProviderMissingTokenURLNamesProviderAndKey() throws {
        let file = #"""
            {"providers": {"acme": {"kind": "oauth2", "client_id": "a", "client_secret": "b",
                "authorize_url": "https://id.acme.example/authorize", "user_url": "https://api.acme.example/me"}}}
            """#
        let error = try #require(loadError(file))
        #expect(error.provider == "acme")
        #expect(error.key == "token_url")
        #expect(error.description.contains("acme") && error.description.contains("token_url"))
    }

    @Test func customOAuth2ProviderNeedsAUserEndpoint() throws {
        let file = #"""
            {"providers": {"acme": {"kind": "oauth2", "client_id": "a", "client_secret": "b",
                "authorize_url": "https://id.acme.example/authorize", "token_url": "https://id.acme.example/token"}}}
            """#
        #expect(loadError(file)?.key == "user_url")
    }

    @Test func unknownOrMissingKindIsRefused() throws {
        let unknown = try #require(loadError(#"{"providers": {"corp": {"kind": "saml"}}}"#))
        #expect(unknown.provider == "corp" && unknown.key == "kind")
        #expect(unknown.message.contains("saml"))
        #expect(loadError(#"{"providers": {"corp": {"client_id": "x"}}}"#)?.key == "kind")
        #expect(loadError(#"{"providers": {"github": {"kind": "oauth1"}}}"#)?.key == "kind")
    }

    /// Found by FuzzDecoders: an unknown kind given by a `${NAME}` reference was quoted resolved, secret and all.
    @Test func anUnknownKindFromAnEnvironmentReferenceIsQuotedAsWrittenNotResolved() throws {
        let error = try #require(
            loadError(
                #"{"providers": {"corp": {"kind": "${CORP_SECRET}"}}}"#,
                environment: ["CORP_SECRET": "s3cret-value-0123"]))
        #expect(error.key == "kind")
        #expect(error.description.contains("${CORP_SECRET}"))
        #expect(!error.description.contains("s3cret-value-0123"))
    }

    @Test func presetNamedInTheFileMustEndUpConfigured() throws {
        let error = try #require(loadError(#"{"providers": {"weibo": {"scopes": ["email"]}}}"#))
        #expect(error.provider == "weibo" && error.key == "client_id")
        #expect(error.message.contains("WEIBO_CLIENT_ID"))
    }

    @Test func badValuesNameTheirKey() throws {
        let env = ["GITHUB_CLIENT_ID": "i", "GITHUB_CLIENT_SECRET": "s"]
        let cases: [(String, String)] = [
            (#""client_secert": "typo""#, "client_secert"),
            (#""token_url": "ftp://github.com/token""#, "token_url"),
            (#""token_url": "/relative""#, "token_url"),
            (#""pkce": "yes""#, "pkce"),
            (#""pkce": 1"#, "pkce"),
            (#""scopes": "repo""#, "scopes"),
            (#""scopes": ["repo", 7]"#, "scopes"),
            (#""token_endpoint_auth_method": "private_key_jwt""#, "token_endpoint_auth_method"),
            (#""authorize_params": {"state": "fixed"}"#, "authorize_params"),
            (#""authorize_params": {"prompt": true}"#, "authorize_params"),
            (#""client_id": 42"#, "client_id"),
            (#""client_secret": "${not a name}""#, "client_secret"),
            (#""user_id_field": "id; drop""#, "user_id_field"),
        ]
        for (setting, key) in cases {
            let error = loadError(#"{"providers": {"github": {\#(setting)}}}"#, environment: env)
            #expect(error?.provider == "github" && error?.key == key, "\(setting) gave \(String(describing: error))")
        }
    }

    @Test func nullRemovesAPresetEndpoint() throws {
        let file = #"{"providers": {"google": {"revoke_url": null}}}"#
        let registry = try load(file, environment: ["GOOGLE_CLIENT_ID": "i", "GOOGLE_CLIENT_SECRET": "s"])
        #expect(registry.provider(named: "google")?.revokeURL == nil)
        #expect(registry.provider(named: "google")?.issuer == "https://accounts.google.com")
    }

    @Test func presetsHaveTheNamesPeopleKnowThemBy() throws {
        let registry = try load(nil)
        let names = Dictionary(uniqueKeysWithValues: registry.all.map { ($0.name, $0.displayedName) })
        #expect(names["github"] == "GitHub" && names["tmdb"] == "TheMovieDB" && names["hubspot"] == "HubSpot")
        #expect(names.count == ProviderPresets.names.count)
        #expect(names.allSatisfy { $0.key != $0.value }, "a preset shown by its key: \(names.filter { $0.key == $0.value })")
        #expect(registry.all.allSatisfy { $0.iconURL == nil })
    }

    @Test func theFileNamesAndIconsProviders() throws {
        let env = ["GITHUB_CLIENT_ID": "i", "GITHUB_CLIENT_SECRET": "s", "ACME_NAME": "Acme ID"]
        let file = #"""
            {"providers": {
              "github": {"display_name": "GitHub Enterprise", "icon_url": "https://github.example/favicon.png"},
              "weibo": {"client_id": "i", "client_secret": "s", "display_name": null, "icon_url": "data:image/svg+xml;base64,PHN2Zy8+"},
              "acme": {"kind": "oauth2", "client_id": "i", "client_secret": "s", "authorize_url": "https://id.acme/a",
                       "token_url": "https://id.acme/t", "user_url": "https://id.acme/u", "display_name": "${ACME_NAME}"}
            }}
            """#
        let registry = try load(file, environment: env)
        #expect(registry.provider(named: "github")?.displayedName == "GitHub Enterprise")
        #expect(registry.provider(named: "github")?.iconURL == "https://github.example/favicon.png")
        #expect(registry.provider(named: "weibo")?.displayedName == "weibo")
        #expect(registry.provider(named: "weibo")?.iconURL == "data:image/svg+xml;base64,PHN2Zy8+")
        #expect(registry.provider(named: "acme")?.displayedName == "Acme ID")
        #expect(registry.provider(named: "acme")?.iconURL == nil)
    }

    @Test func badNamesAndIconsNameTheirKey() throws {
        let env = ["GITHUB_CLIENT_ID": "i", "GITHUB_CLIENT_SECRET": "s"]
        let long = String(repeating: "A", count: 32 * 1024)
        let cases: [(String, String)] = [
            (#""display_name": """#, "display_name"),
            (#""display_name": "   ""#, "display_name"),
            (#""display_name": "Git\nHub""#, "display_name"),
            (#""display_name": "Git\u202eHub""#, "display_name"),
            (#""display_name": "\#(String(repeating: "x", count: 65))""#, "display_name"),
            (#""display_name": 7"#, "display_name"),
            (#""icon_url": "http://github.example/i.png""#, "icon_url"),
            (#""icon_url": "https://user:pw@github.example/i.png""#, "icon_url"),
            (#""icon_url": "https:///i.png""#, "icon_url"),
            (#""icon_url": "javascript:alert(1)""#, "icon_url"),
            (#""icon_url": "data:text/html,<script>alert(1)</script>""#, "icon_url"),
            (#""icon_url": "data:image/png;base64""#, "icon_url"),
            (#""icon_url": "https://github.example/a b.png""#, "icon_url"),
            (#""icon_url": "data:image/png;base64,\#(long)""#, "icon_url"),
        ]
        for (setting, key) in cases {
            let error = loadError(#"{"providers": {"github": {\#(setting)}}}"#, environment: env)
            #expect(error?.provider == "github" && error?.key == key, "\(setting) gave \(String(describing: error))")
        }
    }
}
