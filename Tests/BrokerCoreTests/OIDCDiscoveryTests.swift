import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

/// The discovery document as hostile input, the `oidc` providers-file entry, and how a document becomes endpoints.
struct OIDCDiscoveryTests {
    static func parse(_ document: String, issuer: String = GoogleOpenID.issuer) -> Result<OIDCProviderMetadata, OIDCDocumentProblem> {
        OIDCProviderMetadata.parse(Array(document.utf8), issuer: issuer)
    }

    static func problem(_ document: String, issuer: String = GoogleOpenID.issuer) -> String? {
        if case .failure(let problem) = parse(document, issuer: issuer) { return problem.description }
        return nil
    }

    @Test func googlesDocumentGivesItsEndpointsAndTheGooglePresetKeepsItsBehaviour() throws {
        let metadata = try GoogleOpenID.metadata
        #expect(metadata.authorizationEndpoint == "https://accounts.google.com/o/oauth2/v2/auth")
        #expect(metadata.tokenEndpoint == "https://oauth2.googleapis.com/token")
        #expect(metadata.userinfoEndpoint == "https://openidconnect.googleapis.com/v1/userinfo")
        #expect(metadata.revocationEndpoint == "https://oauth2.googleapis.com/revoke")
        let registry = try ProviderRegistry.load(environment: BrokerHarness.environment, providersFile: nil)
        let google = try #require(registry.provider(named: "google"))
        #expect(google.kind == .oidc && google.issuer == "https://accounts.google.com")
        #expect(registry.discovery.providers == ["google"])
        let resolved = try google.oauth2Configuration(discovered: metadata)
        #expect(resolved.kind == .oauth2)
        #expect(resolved.pkce)
        #expect(resolved.clientAuthentication == .clientSecretPost)
        #expect(resolved.extraAuthorizeParameters.map(\.0) == ["access_type", "prompt"])
        #expect(resolved.revokeURL == "https://oauth2.googleapis.com/revoke" && !resolved.revokeAuthenticatesClient)
        #expect(resolved.userIDFields == ["sub"])
    }

    @Test func theDocumentURLDropsATrailingSlash() {
        #expect(OIDCProviderMetadata.documentURL(issuer: "https://a.example") == "https://a.example/.well-known/openid-configuration")
        #expect(
            OIDCProviderMetadata.documentURL(issuer: "https://a.example/realms/x/")
                == "https://a.example/realms/x/.well-known/openid-configuration")
    }

    @Test func aDocumentForAnotherIssuerIsRefusedByteForByte() {
        let document = GoogleOpenID.document
        #expect(Self.problem(document, issuer: "https://accounts.google.com/")?.contains("§4.3") == true)
        #expect(Self.problem(document, issuer: "https://Accounts.google.com")?.contains("§4.3") == true)
        let entra =
            #"{"issuer":"https://login.microsoftonline.com/{tenantid}/v2.0","authorization_endpoint":"https://a/","token_endpoint":"https://t/"}"#
        let problem = Self.problem(entra, issuer: "https://login.microsoftonline.com/common/v2.0")
        #expect(problem?.contains("multi-tenant template: configure the tenant's own issuer") == true)
    }

    @Test(arguments: [
        (#"[]"#, "the document is not a JSON object"),
        (#"{"#, "the document is not a JSON object"),
        (#"{"authorization_endpoint":"https://a/x","token_endpoint":"https://a/t"}"#, "the document has no issuer"),
        (#"{"issuer":"https://accounts.google.com","token_endpoint":"https://a/t"}"#, "the document has no authorization_endpoint"),
        (#"{"issuer":"https://accounts.google.com","authorization_endpoint":"https://a/x"}"#, "the document has no token_endpoint"),
        (
            #"{"issuer":"https://accounts.google.com","authorization_endpoint":"http://a/x","token_endpoint":"https://a/t"}"#,
            "authorization_endpoint is not an absolute https URL without a fragment"
        ),
        (
            #"{"issuer":"https://accounts.google.com","authorization_endpoint":"https://a/x","token_endpoint":"https://a/t#f"}"#,
            "token_endpoint is not an absolute https URL without a fragment"
        ),
        (
            #"{"issuer":"https://accounts.google.com","authorization_endpoint":"https://a/x","token_endpoint":"https://a/t","revocation_endpoint":7}"#,
            "revocation_endpoint is not an absolute https URL without a fragment"
        ),
        (
            #"{"issuer":"https://accounts.google.com","authorization_endpoint":"https://a/x","token_endpoint":"https://a/t","code_challenge_methods_supported":"S256"}"#,
            "code_challenge_methods_supported is not a list of at most 64 names"
        ),
    ])
    func aMalformedDocumentIsRefusedNamingTheCheck(document: String, reason: String) {
        #expect(Self.problem(document) == reason)
    }

    @Test func aDocumentThatPromisesIssInEveryCallbackMakesACallbackWithoutItRefused() throws {
        let document =
            #"{"issuer":"https://accounts.google.com","authorization_endpoint":"https://a.example/x","#
            + #""token_endpoint":"https://a.example/t","authorization_response_iss_parameter_supported":true}"#
        let metadata = try Self.parse(document).get()
        #expect(metadata.sendsIssuerParameter)
        #expect(try !Self.parse(GoogleOpenID.document).get().sendsIssuerParameter)
        let google = try #require(
            try ProviderRegistry.load(environment: BrokerHarness.environment, providersFile: nil).provider(named: "google"))
        #expect(try google.oauth2Configuration(discovered: metadata).requiresIssuerParameter)
        #expect(try !google.oauth2Configuration(discovered: GoogleOpenID.metadata).requiresIssuerParameter)
    }

    @Test func anOversizedDocumentIsRefusedUnread() {
        let padding = String(repeating: " ", count: OIDCProviderMetadata.maximumDocumentBytes)
        #expect(Self.problem(GoogleOpenID.document + padding) == "the document is larger than 65536 bytes")
    }

    @Test func clientAuthenticationAndPKCEFollowTheDocumentUnlessTheOperatorSaidOtherwise() throws {
        func resolve(_ methods: [String]?, challenge: [String]?, entry: String = "") throws(BrokerError) -> ProviderConfiguration {
            let file = #"{"providers":{"idp":{"kind":"oidc","issuer":"https://idp.example","client_id":"c","client_secret":"s"\#(entry)}}}"#
            let provider = try! #require(
                try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8)).provider(named: "idp"))
            let metadata = OIDCProviderMetadata(
                issuer: "https://idp.example", authorizationEndpoint: "https://idp.example/auth",
                tokenEndpoint: "https://idp.example/token",
                tokenEndpointAuthMethods: methods, codeChallengeMethods: challenge)
            return try provider.oauth2Configuration(discovered: metadata)
        }
        #expect(try resolve(nil, challenge: nil).clientAuthentication == .clientSecretBasic)
        #expect(try resolve(["client_secret_basic"], challenge: nil).clientAuthentication == .clientSecretBasic)
        #expect(try resolve(["client_secret_basic", "client_secret_post"], challenge: nil).clientAuthentication == .clientSecretPost)
        #expect(throws: BrokerError.self) { try resolve(["private_key_jwt"], challenge: nil) }
        #expect(
            try resolve(["private_key_jwt"], challenge: nil, entry: #","token_endpoint_auth_method":"client_secret_basic""#)
                .clientAuthentication == .clientSecretBasic)
        #expect(try resolve(nil, challenge: ["S256"]).pkce)
        #expect(try !resolve(nil, challenge: ["plain"]).pkce)
        #expect(try !resolve(nil, challenge: nil).pkce)
        #expect(try !resolve(nil, challenge: ["S256"], entry: #","pkce":false"#).pkce)
        #expect(try resolve(nil, challenge: nil, entry: #","pkce":true"#).pkce)
    }

    @Test func anOIDCEntryNeedsItsIssuerAndClientAndTakesNoEndpoints() throws {
        func load(_ entry: String) throws(ProviderConfigurationError) -> ProviderRegistry {
            try ProviderRegistry.load(environment: ["IDP_SECRET": "s"], providersFile: Array(#"{"providers":{"idp":{\#(entry)}}}"#.utf8))
        }
        let registry = try load(
            #""kind":"oidc","issuer":"https://idp.example/realms/main","client_id":"c","client_secret":"${IDP_SECRET}""#)
        let idp = try #require(registry.provider(named: "idp"))
        #expect(idp.scopes == ["openid", "email", "profile"])
        #expect(idp.isConfigured)
        #expect(registry.discovery.providers == ["idp"])
        let scoped = try load(
            #""kind":"oidc","issuer":"https://idp.example","client_id":"c","client_secret":"s","scopes":["openid","offline_access"]"#)
        #expect(scoped.provider(named: "idp")?.scopes == ["openid", "offline_access"])
        #expect(
            try load(#""kind":"oidc","issuer":"http://127.0.0.1:8081","client_id":"c","client_secret":"s""#).provider(named: "idp") != nil)
        let refusals: [(String, String)] = [
            (#""kind":"oidc","client_id":"c","client_secret":"s""#, "issuer"),
            (#""kind":"oidc","issuer":"https://idp.example","client_secret":"s""#, "client_id"),
            (#""kind":"oidc","issuer":"http://idp.example","client_id":"c","client_secret":"s""#, "issuer"),
            (#""kind":"oidc","issuer":"https://idp.example?x=1","client_id":"c","client_secret":"s""#, "issuer"),
            (#""kind":"oidc","issuer":"https://idp.example","client_id":"c","client_secret":"s","token_url":"https://x/t""#, "token_url"),
            (#""kind":"oidc","issuer":"https://idp.example","client_id":"c","client_secret":"s","user_id_field":"id""#, "user_id_field"),
            (#""kind":"oidc","issuer":"https://idp.example","client_id":"c","client_secret":"s","scopes":["email"]"#, "scopes"),
        ]
        for (entry, key) in refusals {
            #expect(throws: ProviderConfigurationError.self) { _ = try load(entry) }
            do {
                _ = try load(entry)
            } catch {
                #expect(error.key == key, "\(entry)")
            }
        }
        // The preset's client alone makes Google an OpenID provider waiting for its document; without it nothing is tracked.
        #expect(try ProviderRegistry.load(environment: [:], providersFile: nil).discovery.providers == [])
    }
}
