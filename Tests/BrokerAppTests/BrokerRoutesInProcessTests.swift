import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// The broker's routes called in process, where a socket adds nothing: answers decided before any provider or
/// store is asked. The live suites keep what needs the wire (framing, redirects through a provider, processes).
@Suite(.scoped) struct BrokerRoutesInProcessTests {
    static let weibo =
        #""weibo": {"client_id": "1234567890", "client_secret": "S", "authorize_url": "http://127.0.0.1:9/oauth2/authorize", "token_url": "http://127.0.0.1:9/oauth2/access_token"}"#

    static func broker() throws -> BrokerHarness {
        try BrokerHarness(providersJSON: "{\"providers\": {\(weibo)}}", listen: false)
    }

    static func text(_ response: Response) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test func healthProvidersAndTheAnswersForNoRoute() async throws {
        let b = try Self.broker()
        #expect(Self.text(await b.respond(.GET, "/healthz")) == #"{"status":"ok"}"#)
        let providers = await b.respond(.GET, "/providers")
        #expect(Self.text(providers).contains(#"{"name":"weibo","display_name":"Weibo","icon_url":null,"kind":"oauth2","configured":true"#))
        #expect(
            Self.text(providers).contains(#""name":"github","display_name":"GitHub","icon_url":null,"kind":"oauth2","configured":false"#))
        let missing = await b.respond(.GET, "/nowhere")
        #expect(missing.status.code == 404 && Self.text(missing).contains(#""error":"not_found""#))
        let wrong = await b.respond(.DELETE, "/healthz")
        #expect(wrong.status.code == 405 && wrong.headers["Allow"] == "GET, HEAD")
    }

    @Test(arguments: [
        "", " ", "x", String(BrokerHarness.apiKey.dropLast()), BrokerHarness.apiKey + "0", BrokerHarness.apiKey.uppercased(),
        " " + BrokerHarness.apiKey, String(BrokerHarness.apiKey.prefix(8)), String(repeating: "a", count: 4096),
    ])
    func apiKeyLookAlikesAreRefused(presented: String) async throws {
        let b = try Self.broker()
        #expect(await b.respond(.GET, "/accounts", headers: [("Authorization", "Bearer " + presented)]).status.code == 401)
        #expect(await b.respond(.GET, "/accounts", headers: [("Authorization", "bearer " + BrokerHarness.apiKey)]).status.code == 200)
    }

    @Test(arguments: [
        "//evil.com", "/\\evil.com", "/\t/evil.com", "/%2F%2Fevil.com", "https://app.example.com.evil.com",
        "https://evil.com", "https://app.example.com%0d%0aSet-Cookie:x=1", "javascript:alert(1)",
        "https://user@app.example.com", "http://app.example.com",
    ])
    func openRedirectsAreRefused(returnTo: String) async throws {
        let b = try Self.broker()
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encoded = try #require(returnTo.addingPercentEncoding(withAllowedCharacters: allowed))
        let reply = await b.respond(.GET, "/authorize?provider=weibo&return_to=" + encoded)
        #expect(reply.status.code == 400)
        #expect(Self.text(reply).contains(#""error":"invalid_return_to""#))
        #expect(reply.headers["Location"] == nil)
    }

    @Test func authorizeSendsTheBrowserToTheProviderWithABoundFlowCookie() async throws {
        let b = try Self.broker()
        let reply = await b.respond(.GET, "/authorize?provider=weibo")
        #expect(reply.status.code == 302)
        let location = try #require(reply.headers["Location"])
        #expect(
            location.hasPrefix(
                "http://127.0.0.1:9/oauth2/authorize?client_id=1234567890&redirect_uri=http%3A%2F%2Flocalhost%3A8080%2Fcallback"))
        let cookie = try #require(reply.headers.values(for: "Set-Cookie").first { $0.hasPrefix("tb_flow=") })
        #expect(cookie.contains("HttpOnly") && cookie.contains("Path=/callback"))
        let unconfigured = await b.respond(.GET, "/authorize?provider=github")
        #expect(unconfigured.status.code == 503 && Self.text(unconfigured).contains("provider_not_configured"))
    }

    @Test func theConnectPageCarriesItsSecurityHeaders() async throws {
        let b = try Self.broker()
        let page = await b.respond(.GET, "/", headers: [("Accept", "text/html")])
        #expect(page.status.code == 200)
        #expect(page.headers["Content-Security-Policy"]?.contains("default-src 'none'") == true)
        #expect(page.headers["Referrer-Policy"] == "no-referrer" && page.headers["Cache-Control"] == "no-store")
        #expect(Self.text(page).contains(">Connect Weibo</a>"))
    }
}
