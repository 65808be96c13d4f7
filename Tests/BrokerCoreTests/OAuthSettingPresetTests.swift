import Foundation
import Testing

@testable import BrokerCore

/// The OAuth presets at each customer's own host (`ProviderPresets+AccountSettings.swift`): each declares the setting
/// its URLs hold, in their host, so an account's value fills every URL and can never move it to another domain; each
/// is cited in docs/providers.md's table.
@Suite struct OAuthSettingPresetTests {
    static let catalogue = ProviderPresets.settingsCatalogue

    /// The documented URLs of each preset for the value `acme`.
    static let expected: [String: [String?]] = [
        "okta": [
            "https://acme.okta.com/oauth2/v1/authorize", "https://acme.okta.com/oauth2/v1/token",
            "https://acme.okta.com/oauth2/v1/userinfo", "https://acme.okta.com/oauth2/v1/revoke", "https://acme.okta.com/api/v1",
        ],
        "shopify": [
            "https://acme.myshopify.com/admin/oauth/authorize", "https://acme.myshopify.com/admin/oauth/access_token",
            "https://acme.myshopify.com/admin/api/2026-10/shop.json", nil, "https://acme.myshopify.com/admin/api/2026-10",
        ],
        "zendesk": [
            "https://acme.zendesk.com/oauth/authorizations/new", "https://acme.zendesk.com/oauth/tokens",
            "https://acme.zendesk.com/api/v2/users/me.json", nil, "https://acme.zendesk.com/api/v2",
        ],
    ]

    @Test func eachFillsItsOwnHostAndRefusesAnotherDomain() throws {
        #expect(Self.catalogue.map(\.name) == Self.expected.keys.sorted())
        for preset in Self.catalogue {
            let setting = try #require(preset.accountSettings.first, "\(preset.name)")
            #expect(preset.accountSettings.count == 1 && preset.settingsInHost == [setting.name], "\(preset.name)")
            #expect(preset.missingSettings == [preset.name.uppercased() + "_CLIENT_ID", preset.name.uppercased() + "_CLIENT_SECRET"])
            let (resolved, kept) = try preset.applyingSettings([setting.name: "acme"])
            #expect(kept == [setting.name: "acme"])
            #expect(
                [resolved.authorizeURL, resolved.tokenURL, resolved.userURL, resolved.revokeURL, resolved.apiBaseURL]
                    == Self.expected[preset.name], "\(preset.name)")
            // Shopify documents no PKCE; the others take S256.
            #expect(resolved.pkce == (preset.name != "shopify") && resolved.kind == .oauth2, "\(preset.name)")
            for value in ["acme.evil.com", "a@b", "..", "", "a/b", "%2e"] {
                #expect(throws: BrokerError.self, "\(preset.name) \(value)") { try preset.applyingSettings([setting.name: value]) }
            }
            #expect(throws: BrokerError.self) { try preset.applyingSettings([:]) }
        }
    }

    /// Shopify: comma-separated scopes (its authorize page's `scope`), client credentials in the token request's body,
    /// `expiring=1` for an expiring offline token with a rotating refresh token, the shop's id as the uid, and the
    /// token in `X-Shopify-Access-Token` both to `shop.json` and through the proxy, with no `Authorization`.
    @Test func shopifyPlacesItsTokenInItsOwnHeaderAndNamesTheShop() throws {
        let shopify = ProviderPresets.shopify
        #expect(shopify.scopeSeparator == "," && shopify.clientAuthentication == .clientSecretPost)
        #expect(shopify.extraTokenParameters.map(\.0) == ["expiring"] && shopify.extraTokenParameters.map(\.1) == ["1"])
        #expect(shopify.refreshTokenRotates && shopify.userIDFields == ["shop.id"])
        let header = APITokenHeader(name: "X-Shopify-Access-Token", format: "{access_token}")
        #expect(shopify.apiTokenHeader == header && shopify.userRequest.tokenHeader == header)
        let (resolved, _) = try shopify.applyingSettings(["shop": "Acme-Store"])
        let base = try ProxyTarget.Base(#require(resolved.apiBaseURL))
        let request = try ProxyOutbound.make(
            method: "GET", base: base, path: "/shop.json", query: nil,
            callerHeaders: [("Authorization", "Bearer caller"), ("Accept", "application/json")],
            credential: ProxyCredential(accessToken: Secret("shpat_x")), placement: ProxyCredentialPlacement(provider: resolved))
        #expect(request.url.lowercased() == "https://acme-store.myshopify.com/admin/api/2026-10/shop.json")
        #expect(request.headers.filter { $0.name.lowercased() == "authorization" }.isEmpty)
        #expect(request.headers.filter { $0.name == "X-Shopify-Access-Token" }.map(\.value) == ["shpat_x"])
        for value in ["-acme", "acme_store", "acme.myshopify.com"] {
            #expect(throws: BrokerError.self, "\(value)") { try shopify.applyingSettings(["shop": value]) }
        }
    }

    /// What Shopify's endpoints receive: scopes joined with `,`, the client credentials and `expiring=1` in the token
    /// request's form body (no Basic header), and `shop.json` asked with the token in `X-Shopify-Access-Token` alone.
    @Test func shopifysRequestsAreShapedAsItsDocumentationSays() throws {
        var (shopify, _) = try ProviderPresets.shopify.applyingSettings(["shop": "acme"])
        shopify.clientID = "shopify-client"
        shopify.clientSecret = Secret("shopify-secret-SENTINEL")
        shopify.scopes = ["read_products", "write_orders"]
        let client = OAuth2Client(
            settings: try OAuth2Settings(shopify), redirectURI: "https://broker.example/callback", upstream: FakeUpstream())
        let authorize = try #require(URLComponents(string: client.authorizeURL(state: "st", codeChallenge: nil)))
        #expect(authorize.host == "acme.myshopify.com" && authorize.path == "/admin/oauth/authorize")
        #expect(authorize.queryItems?.first { $0.name == "scope" }?.value == "read_products,write_orders")
        #expect(authorize.queryItems?.contains { $0.name == "code_challenge" } == false)
        let token = client.tokenRequest(url: "https://acme.myshopify.com/admin/oauth/access_token", form: [("code", "c0de")])
        let form = Set(String(decoding: token.body, as: UTF8.self).split(separator: "&").map(String.init))
        #expect(form.isSuperset(of: ["code=c0de", "expiring=1", "client_id=shopify-client", "client_secret=shopify-secret-SENTINEL"]))
        #expect(!token.headers.contains { $0.0.lowercased() == "authorization" })
        let user = client.userRequest(url: "https://acme.myshopify.com/admin/api/2026-10/shop.json", accessToken: Secret("shpat_1"))
        #expect(user.method == "GET" && user.headers.filter { $0.0 == "X-Shopify-Access-Token" }.map(\.1) == ["shpat_1"])
        #expect(!user.headers.contains { $0.0.lowercased() == "authorization" })
    }

    @Test func eachIsCitedInTheDocsTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/providers.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## OAuth presets at the customer's own host\n").dropFirst().first)
        var rows: [String: [String]] = [:]
        for line in section.split(separator: "\n") {
            if line.hasPrefix("## ") { break }
            guard line.hasPrefix("| `") else { continue }
            let name = line.split(separator: "|")[0].trimmingCharacters(in: CharacterSet(charactersIn: " `"))
            rows[name] = line.components(separatedBy: "](").dropFirst().map { String($0.prefix { $0 != ")" }) }
        }
        #expect(Set(rows.keys) == Set(Self.catalogue.map(\.name)))
        for (name, links) in rows { #expect(!links.isEmpty && links.allSatisfy { $0.hasPrefix("https://") }, "\(name)") }
    }
}
