import BrokerCrypto
import Foundation
import Testing

@testable import BrokerCore

/// The pieces of remote MCP server discovery that need no server: the providers-file entry, the challenge, the
/// well-known URLs, the protected resource metadata's checks, the registration answer and the stored registration.
struct MCPDiscoveryTests {
    static let key = EncryptionKey(id: "k1", bytes: (0..<32).map { UInt8($0) })

    private func load(_ settings: String) throws(ProviderConfigurationError) -> ProviderConfiguration? {
        let file = #"{"providers": {"tools": {"kind": "mcp"\#(settings.isEmpty ? "" : ", " + settings)}}}"#
        return try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8)).provider(named: "tools")
    }

    @Test func anEntryNeedsOnlyTheServerAndMakesItTheAPIBase() throws {
        let c = try #require(try load(#""server": "https://mcp.example.com/mcp", "scopes": ["tools:read"], "client_name": "Agents""#))
        #expect(c.kind == .mcp && c.isConfigured && c.pkce)
        #expect(c.mcpServer == "https://mcp.example.com/mcp" && c.apiBaseURL == c.mcpServer)
        #expect(c.mcpClientName == "Agents" && c.scopes == ["tools:read"])
        #expect(c.clientAuthentication == .publicClient)
    }

    @Test(arguments: [
        (#""server": "http://mcp.example.com/mcp""#, "server"), (#""server": "https://mcp.example.com/mcp/""#, "server"),
        (#""server": "https://MCP.example.com/mcp""#, "server"), (#""server": "https://mcp.example.com/mcp?x=1""#, "server"),
        (#""server": "https://mcp.example.com/mcp#f""#, "server"), ("", "server"),
        (#""server": "https://mcp.example.com/mcp", "token_url": "https://x.example/t""#, "token_url"),
        (#""server": "https://mcp.example.com/mcp", "pkce": false"#, "pkce"),
        (#""server": "https://mcp.example.com/mcp", "client_secret": "s""#, "client_secret"),
        (#""server": "https://mcp.example.com/mcp", "client_name": """#, "client_name"),
    ])
    func aBadEntryStopsStartUpNamingTheKey(settings: String, key: String) {
        #expect {
            _ = try load(settings)
        } throws: { error in
            (error as? ProviderConfigurationError).map { $0.provider == "tools" && $0.key == key } ?? false
        }
    }

    @Test func httpNeedsApiAllowPrivateAndServerBelongsToMCPOnly() throws {
        #expect(try load(#""server": "http://127.0.0.1:8000/mcp", "api_allow_private": true"#)?.mcpServer == "http://127.0.0.1:8000/mcp")
        let file = #"{"providers": {"acme": {"kind": "oauth2", "server": "https://x.example/mcp"}}}"#
        #expect(throws: ProviderConfigurationError.self) { try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8)) }
    }

    @Test func theChallengeNamesTheMetadataAndScope() {
        let challenge = MCPServerMetadata.challenge(
            #"Bearer realm="mcp", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read files:write""#
        )
        #expect(challenge.resourceMetadata == "https://mcp.example.com/.well-known/oauth-protected-resource")
        #expect(challenge.scope == "files:read files:write")
        #expect(MCPServerMetadata.challenge(#"Basic realm="x""#).resourceMetadata == nil)
        #expect(MCPServerMetadata.challenge(#"Bearer resource_metadata="unterminated"#).resourceMetadata == nil)
        #expect(
            MCPServerMetadata.challenge(#"Bearer error="invalid_token", resource_metadata=https://a.example/x"#).resourceMetadata
                == "https://a.example/x")
        #expect(MCPServerMetadata.challenge(nil).resourceMetadata == nil)
        #expect(MCPServerMetadata.scopes("a b") == ["a", "b"] && MCPServerMetadata.scopes("a\"b") == nil)
    }

    @Test func wellKnownURLsInsertTheSuffixBeforeThePath() {
        // RFC 9728 §3.1 and RFC 8414 §3.1: the well-known string goes between the host and the path.
        #expect(
            MCPServerMetadata.protectedResourceURLs(server: "https://example.com/public/mcp") == [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ])
        #expect(
            MCPServerMetadata.protectedResourceURLs(server: "https://example.com") == [
                "https://example.com/.well-known/oauth-protected-resource"
            ])
        #expect(
            MCPServerMetadata.authorizationServerURLs(issuer: "https://auth.example.com/tenant1") == [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ])
        #expect(
            MCPServerMetadata.authorizationServerURLs(issuer: "http://127.0.0.1:9000") == [
                "http://127.0.0.1:9000/.well-known/oauth-authorization-server",
                "http://127.0.0.1:9000/.well-known/openid-configuration",
            ])
    }

    @Test func theProtectedResourceMustBeTheServerAndNameAnAuthorizationServer() {
        let server = "https://mcp.example.com/mcp"
        func parse(_ json: String, http: Bool = false) -> Result<MCPServerMetadata.ProtectedResource, OIDCDocumentProblem> {
            MCPServerMetadata.protectedResource(Array(json.utf8), server: server, allowingHTTP: http)
        }
        let good = parse(
            #"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["a"]}"#)
        #expect(
            (try? good.get())
                == MCPServerMetadata.ProtectedResource(
                    resource: server, authorizationServer: "https://auth.example.com", scopesSupported: ["a"]))
        for bad in [
            #"{"resource":"https://mcp.example.com/other","authorization_servers":["https://auth.example.com"]}"#,
            #"{"resource":"https://mcp.example.com/mcp","authorization_servers":[]}"#,
            #"{"resource":"https://mcp.example.com/mcp","authorization_servers":["http://auth.example.com"]}"#,
            #"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com?x=1"]}"#,
            #"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":"a"}"#,
            "[]", "not json",
        ] {
            #expect((try? parse(bad).get()) == nil, "\(bad)")
        }
        #expect(
            (try? parse(#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["http://127.0.0.1:1"]}"#, http: true).get())
                != nil)
        let huge =
            #"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://a.example"],"x":""#
            + String(repeating: "a", count: OIDCProviderMetadata.maximumDocumentBytes) + #""}"#
        #expect((try? parse(huge).get()) == nil)
    }

    @Test func aRegistrationAnswerIsCheckedWhereItEnters() throws {
        func read(_ json: String) throws(BrokerError) -> ClientRegistration {
            try MCPDiscovery.registration(
                Array(json.utf8), server: "https://mcp.example.com/mcp", issuer: "https://auth.example.com",
                redirectURI: "https://broker.example.com/callback", at: Date(timeIntervalSince1970: 1_800_000_000),
                step: "client_registration")
        }
        let publicClient = try read(#"{"client_id":"abc","token_endpoint_auth_method":"none"}"#)
        #expect(publicClient.clientID == "abc" && publicClient.authentication == .publicClient && publicClient.clientSecret == nil)
        let confidential = try read(#"{"client_id":"abc","client_secret":"REGISTERED-SECRET"}"#)
        #expect(confidential.authentication == .clientSecretBasic && confidential.clientSecret?.value == "REGISTERED-SECRET")
        for bad in [
            "{}", #"{"client_id":""}"#, #"{"client_id":"a b"}"#, #"{"client_id":"abc","token_endpoint_auth_method":"private_key_jwt"}"#,
            #"{"client_id":"abc","token_endpoint_auth_method":"client_secret_post"}"#, "[1]",
        ] {
            #expect(throws: BrokerError.self, "\(bad)") { try read(bad) }
        }
    }

    @Test func aStoredRegistrationIsSealedAndOpensOnlyUnderItsKey() throws {
        let codec = EncryptedAccountCodec(keyring: EncryptionKeyring(keys: [Self.key], source: "test"))
        let registration = ClientRegistration(
            server: "https://mcp.example.com/mcp", issuer: "https://auth.example.com", redirectURI: "https://broker.example.com/callback",
            clientID: "abc", clientSecret: Secret("CLIENT-SECRET-SENTINEL"), authentication: .clientSecretBasic,
            registeredAt: Date(timeIntervalSince1970: 1_800_000_000.25))
        let bytes = ClientRegistrationCodec.encode(registration, sealer: codec)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("CLIENT-SECRET-SENTINEL"))
        #expect(try ClientRegistrationCodec.decode(bytes, key: registration.key, path: "test", sealer: codec) == registration)
        #expect(throws: StoreError.self) { try ClientRegistrationCodec.decode(bytes, key: "mcp:other", path: "test", sealer: codec) }
        #expect(throws: StoreError.self) { try ClientRegistrationCodec.decode(bytes, key: registration.key, path: "test", sealer: nil) }
        let plain = ClientRegistrationCodec.encode(registration, sealer: nil)
        #expect(try ClientRegistrationCodec.decode(plain, key: registration.key, path: "test", sealer: nil) == registration)
        #expect(registration.key.hasPrefix("mcp:") && registration.key.utf8.count == 68)
    }

    @Test func theAuthorizationPutsResourceOnAuthorizeAndTokenRequests() throws {
        let provider = try #require(try load(#""server": "https://mcp.example.com/mcp""#))
        let authorization = MCPAuthorization(
            server: "https://mcp.example.com/mcp",
            metadata: OIDCProviderMetadata(
                issuer: "https://auth.example.com", authorizationEndpoint: "https://auth.example.com/authorize",
                tokenEndpoint: "https://auth.example.com/token", codeChallengeMethods: ["S256"]),
            registrationEndpoint: nil, supportsClientMetadataDocument: false, scopes: ["tools:read"], clientID: "abc", clientSecret: nil,
            authentication: .publicClient, clientSource: .dynamic)
        let c = authorization.oauth2Configuration(of: provider)
        let settings = try OAuth2Settings(c)
        #expect(settings.extraAuthorizeParameters.map(\.1) == ["https://mcp.example.com/mcp"])
        #expect(settings.extraTokenParameters.map(\.0) == ["resource"])
        #expect(settings.pkce && settings.scopes == ["tools:read"] && settings.credentials.authentication == .publicClient)
        let client = OAuth2Client(settings: settings, redirectURI: "https://broker.example.com/callback", upstream: NoUpstream())
        let url = client.authorizeURL(state: "s", codeChallenge: "c")
        #expect(url.contains("resource=https%3A%2F%2Fmcp.example.com%2Fmcp") && url.contains("code_challenge_method=S256"))
        let token = client.tokenRequest(url: settings.tokenURL, form: [("grant_type", "refresh_token")])
        let body = String(decoding: token.body, as: UTF8.self)
        #expect(body.contains("resource=https%3A%2F%2Fmcp.example.com%2Fmcp") && body.contains("client_id=abc"))
        #expect(!body.contains("client_secret") && token.header("Authorization") == nil)
    }
}

/// An upstream that is never called.
private struct NoUpstream: UpstreamClient {
    func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        throw .transport(.connectRefused, "not called")
    }
}
