import BrokerCore
import Testing

/// The Microsoft preset reads a tenant's OpenID discovery document when `MICROSOFT_TENANT` is a tenant id, keeps
/// the documented static endpoints otherwise, and names accounts by Graph's `id` either way.
struct MicrosoftTenantTests {
    static let credentials = ["MICROSOFT_CLIENT_ID": "m", "MICROSOFT_CLIENT_SECRET": "microsoft-secret-SENTINEL"]
    static let tenantID = "aaaabbbb-0000-cccc-1111-dddd2222eeee"

    private func microsoft(tenant: String?, file: String? = nil) throws -> ProviderConfiguration? {
        var environment = Self.credentials
        if let tenant { environment["MICROSOFT_TENANT"] = tenant }
        return try ProviderRegistry.load(environment: environment, providersFile: file.map { Array($0.utf8) }).provider(named: "microsoft")
    }

    @Test func aTenantIDMakesThePresetOpenIDConnectWithTheTenantsIssuer() throws {
        let preset = try #require(try microsoft(tenant: Self.tenantID.uppercased()))
        #expect(preset.kind == .oidc)
        #expect(preset.issuer == "https://login.microsoftonline.com/\(Self.tenantID)/v2.0")
        #expect(preset.authorizeURL == nil && preset.tokenURL == nil)
        #expect(preset.isConfigured)
    }

    @Test(arguments: ["common", "organizations", "consumers", "contoso.onmicrosoft.com", "aaaabbbb-0000-cccc-1111-dddd2222eeeg", ""])
    func anyOtherTenantKeepsTheStaticEndpoints(tenant: String) throws {
        // A domain's document names the tenant id as its issuer, the multi-tenant ones a {tenantid} template:
        // neither equals the URL it is fetched under (OIDC Discovery §4.3).
        let preset = try #require(try microsoft(tenant: tenant))
        #expect(preset.kind == .oauth2)
        let shown = tenant.isEmpty ? "common" : tenant
        #expect(preset.tokenURL == "https://login.microsoftonline.com/\(shown)/oauth2/v2.0/token")
        #expect(preset.issuer == nil)
    }

    @Test func theAccountStaysGraphsIDAndPKCEStaysOnWhateverTheDocumentLists() throws {
        let preset = try #require(try microsoft(tenant: Self.tenantID))
        let base = "https://login.microsoftonline.com/\(Self.tenantID)"
        let metadata = OIDCProviderMetadata(
            issuer: base + "/v2.0", authorizationEndpoint: base + "/oauth2/v2.0/authorize", tokenEndpoint: base + "/oauth2/v2.0/token",
            userinfoEndpoint: "https://graph.microsoft.com/oidc/userinfo",
            tokenEndpointAuthMethods: ["client_secret_post", "private_key_jwt", "client_secret_basic"])
        let discovered = try preset.oauth2Configuration(discovered: metadata)
        #expect(discovered.userURL == "https://graph.microsoft.com/v1.0/me")
        #expect(discovered.userIDFields == ["id"])
        #expect(discovered.userRequest.userNameField == "displayName")
        #expect(discovered.pkce)
        #expect(discovered.clientAuthentication == .clientSecretPost)
        #expect(discovered.authorizeURL == base + "/oauth2/v2.0/authorize")
    }

    @Test func aProvidersFileEntryWithEndpointsOrSayingOAuth2KeepsTheStaticPreset() throws {
        // A sovereign cloud's endpoints, written before the preset read discovery documents, still start.
        let sovereign = #"""
            {"providers": {"microsoft": {"authorize_url": "https://login.microsoftonline.us/t/oauth2/v2.0/authorize",
                "token_url": "https://login.microsoftonline.us/t/oauth2/v2.0/token"}}}
            """#
        let fromFile = try #require(try microsoft(tenant: Self.tenantID, file: sovereign))
        #expect(fromFile.kind == .oauth2)
        #expect(fromFile.tokenURL == "https://login.microsoftonline.us/t/oauth2/v2.0/token")
        let saidOAuth2 = try #require(try microsoft(tenant: Self.tenantID, file: #"{"providers": {"microsoft": {"kind": "oauth2"}}}"#))
        #expect(saidOAuth2.kind == .oauth2)
        #expect(saidOAuth2.tokenURL == "https://login.microsoftonline.com/\(Self.tenantID)/oauth2/v2.0/token")
        let plain = try #require(try microsoft(tenant: Self.tenantID, file: #"{"providers": {"microsoft": {"display_name": "Work"}}}"#))
        #expect(plain.kind == .oidc)
    }
}
