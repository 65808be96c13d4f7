import BrokerCore
import Testing

/// `api_base_url` (the API proxy's base) and `api_allow_private` in the providers file, checked at load.
struct ProvidersFileAPIBaseTests {
    private func load(_ settings: String, kind: String = "oauth2") throws(ProviderConfigurationError) -> ProviderRegistry {
        let file =
            #"{"providers": {"acme": {"kind": "\#(kind)", "client_id": "acme", "client_secret": "s", "#
            + #""authorize_url": "https://acme.example/authorize", "token_url": "https://acme.example/token", "#
            + #""user_url": "https://acme.example/me"\#(settings.isEmpty ? "" : ", " + settings)}}}"#
        return try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8))
    }

    @Test func bothKeysReachTheConfiguration() throws {
        let set = try #require(
            try load(#""api_base_url": "https://api.acme.example/v2", "api_allow_private": true"#).provider(named: "acme"))
        #expect(set.apiBaseURL == "https://api.acme.example/v2" && set.apiAllowPrivate)
        let unset = try #require(try load("").provider(named: "acme"))
        #expect(unset.apiBaseURL == nil && !unset.apiAllowPrivate)
    }

    @Test(arguments: [
        "http://api.acme.example", "https://user@api.acme.example", "https://api.acme.example/v1?x=1",
        "https://api.acme.example/a/../b", "https://api.acme.example/a%2fb", "https://api.acme.example:99999",
    ])
    func aBadBaseStopsStartUpNamingTheProviderAndKey(base: String) {
        #expect {
            _ = try load(#""api_base_url": "\#(base)""#)
        } throws: { error in
            guard let error = error as? ProviderConfigurationError else { return false }
            return error.provider == "acme" && error.key == "api_base_url" && !error.description.contains(base)
        }
    }

    @Test func aNonBooleanAllowPrivateIsRefused() {
        #expect {
            _ = try load(#""api_allow_private": "yes""#)
        } throws: { error in
            (error as? ProviderConfigurationError).map { $0.provider == "acme" && $0.key == "api_allow_private" } ?? false
        }
    }

    @Test func theGitHubPresetDocumentsItsAPIBaseAndAFileMayReplaceIt() throws {
        let environment = ["GITHUB_CLIENT_ID": "id", "GITHUB_CLIENT_SECRET": "secret"]
        let preset = try ProviderRegistry.load(environment: environment, providersFile: Array(#"{"providers": {"github": {}}}"#.utf8))
        let github = try #require(preset.provider(named: "github"))
        #expect(github.apiBaseURL == "https://api.github.com" && !github.apiAllowPrivate)
        #expect(try ProxyTarget.Base(#require(github.apiBaseURL)).origin == "https://api.github.com")
        let file = #"{"providers": {"github": {"api_base_url": "https://ghe.example.com/api/v3"}}}"#
        let replaced = try ProviderRegistry.load(environment: environment, providersFile: Array(file.utf8))
        #expect(replaced.provider(named: "github")?.apiBaseURL == "https://ghe.example.com/api/v3")
    }
}
