import BrokerCore
import Testing

/// `refresh_margin` and `default_expires_in` in the providers file: read into the configuration, bad values refused naming provider and key.
struct ProvidersFileLifetimeTests {
    static let environment = ["ACME_SECRET": "acme-secret-SENTINEL"]

    private func load(_ settings: String) throws(ProviderConfigurationError) -> ProviderRegistry {
        let file =
            #"{"providers": {"acme": {"kind": "oauth2", "client_id": "acme", "client_secret": "${ACME_SECRET}", "#
            + #""authorize_url": "https://acme.example/authorize", "token_url": "https://acme.example/token", "#
            + #""user_url": "https://acme.example/me"\#(settings.isEmpty ? "" : ", " + settings)}}}"#
        return try ProviderRegistry.load(environment: Self.environment, providersFile: Array(file.utf8))
    }

    @Test func bothKeysReachTheConfigurationAndDefaultToAbsent() throws {
        let set = try #require(try load(#""refresh_margin": 60, "default_expires_in": 7200"#).provider(named: "acme"))
        #expect(set.refreshMargin == 60)
        #expect(set.defaultExpiresIn == 7200)
        let unset = try #require(try load("").provider(named: "acme"))
        #expect(unset.refreshMargin == nil && unset.defaultExpiresIn == nil)
        #expect(try load(#""refresh_margin": 0"#).provider(named: "acme")?.refreshMargin == 0)
    }

    @Test(arguments: [
        #""refresh_margin": -1"#, #""refresh_margin": 1.5"#, #""refresh_margin": "300""#, #""refresh_margin": true"#,
        #""refresh_margin": 31536001"#, #""refresh_margin": 1e300"#, #""default_expires_in": 0"#,
        #""default_expires_in": -3600"#, #""default_expires_in": 99999999999999999999"#,
    ])
    func aBadValueStopsStartUpNamingTheProviderAndKey(settings: String) {
        let key = settings.contains("refresh_margin") ? "refresh_margin" : "default_expires_in"
        #expect {
            _ = try load(settings)
        } throws: { error in
            guard let error = error as? ProviderConfigurationError else { return false }
            return error.provider == "acme" && error.key == key && error.description.contains("whole number of seconds")
        }
    }
}
