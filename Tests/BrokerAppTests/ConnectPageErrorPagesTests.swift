import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Errors of `/authorize` and `/callback`: a page in plain words for browsers, the API's JSON for everyone else.
@Suite(.scoped) struct ConnectPageErrorPagesTests {
    typealias H = ConnectPageHandlersTests

    static func expectErrorPage(
        _ reply: TestHTTP.Reply, status: Int, saying words: String,
        back: String = "<a class=\"button\" href=\"/\">Back to token-broker</a>"
    ) {
        #expect(reply.status == status)
        H.expectPageHeaders(reply)
        #expect(reply.header("Vary") == "Accept")
        #expect(reply.body.contains(words), "page lacks \(words)")
        #expect(reply.body.contains(back))
        #expect(!reply.body.contains("{\"error\""))
    }

    @Test func aDenialReadsAsWordsForTheBrowserAndJSONForCurl() async throws {
        let s = try WeiboFlowTests.setUp()
        s.weibo.set { $0.deny = true }
        let browser = s.browser
        let callback = try await H.callbackTarget(browser)
        let page = try #require(await browser.get(callback, headers: H.html))
        Self.expectErrorPage(page, status: 403, saying: "The sign-in was cancelled or refused at the provider")
        #expect(page.body.contains("<h1>The account was not connected</h1>"))
        #expect(page.body.contains("<code>access_denied</code>"))
        #expect(page.headers("Set-Cookie").contains { $0.hasPrefix("tb_flow=;") })
        #expect(s.weibo.tokenCalls == 0)

        let callback2 = try await H.callbackTarget(browser)
        let json = try #require(await browser.get(callback2, headers: [("Accept", "*/*")]))
        #expect(json.status == 403)
        #expect(json.header("Content-Type") == "application/json")
        #expect(json.body.contains("\"error\":\"access_denied\""))
        #expect(json.header("Vary") == "Accept")
    }

    @Test func aForeignOrReplayedStateIsExplainedWithoutJargon() async throws {
        let s = try WeiboFlowTests.setUp()
        let callback = try await H.callbackTarget(s.browser)
        let foreign = Browser(brokerPort: s.broker.port, providerPort: s.weibo.port)
        let page = try #require(await foreign.get(callback, headers: H.html))
        Self.expectErrorPage(page, status: 400, saying: "could not be matched to one started in this browser")
        #expect(s.weibo.tokenCalls == 0)
        let bare = try #require(await foreign.get("/callback", headers: H.html))
        Self.expectErrorPage(bare, status: 400, saying: "could not be matched")
    }

    @Test func aProviderFaultNamesTheFailedStepAndLeaksNothing() async throws {
        let s = try WeiboFlowTests.setUp()
        s.weibo.set { $0.exchangeFailure = .invalidGrant }
        let browser = s.browser
        let callback = try await H.callbackTarget(browser)
        let page = try #require(await browser.get(callback, headers: H.html))
        Self.expectErrorPage(page, status: 502, saying: "token exchange failed")
        #expect(page.body.contains("Nothing was changed."))
        #expect(!page.body.contains("WEIBO-CODE") && !page.body.contains(WeiboFlowTests.clientSecret))
    }

    @Test func authorizeErrorsArePagesForBrowsers() async throws {
        let s = try WeiboFlowTests.setUp()
        let browser = s.browser
        let github = try #require(await browser.get("/authorize?provider=github", headers: H.html))
        Self.expectErrorPage(github, status: 503, saying: "set GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET")
        let unknown = try #require(await browser.get("/authorize?provider=%3Cscript%3E", headers: H.html))
        Self.expectErrorPage(unknown, status: 404, saying: "No provider named (given) is known.")
        #expect(!unknown.body.contains("<script>"))
        let missing = try #require(await browser.get("/authorize", headers: H.html))
        Self.expectErrorPage(missing, status: 400, saying: "The provider query parameter is required.")
        let redirect = try #require(await browser.get("/authorize?provider=weibo&return_to=https%3A%2F%2Fevil.com", headers: H.html))
        Self.expectErrorPage(redirect, status: 400, saying: "return_to must be an http(s) URL on an allowed origin.")
        #expect(redirect.header("Location") == nil)
        // The same requests from curl keep their JSON.
        let curl = try #require(await TestHTTP.send(port: s.broker.port, target: "/authorize?provider=github"))
        #expect(curl.status == 503)
        #expect(curl.body.contains("\"error\":\"provider_not_configured\""))
    }

    @Test func underAPublicPathAndATitleTheWayBackLeadsToThePageByItsName() async throws {
        let s = try WeiboFlowTests.setUp(environment: [
            "BROKER_PUBLIC_URL": "http://127.0.0.1:8080/broker",
            "BROKER_PAGE_TITLE": "Acme <Accounts>", "BROKER_PAGE_ACCENT": "#6A1B9A",
        ])
        let browser = s.browser
        let unknown = try #require(await browser.get("/authorize?provider=nope", headers: H.html))
        Self.expectErrorPage(
            unknown, status: 404, saying: "No provider named",
            back: "<a class=\"button\" href=\"/broker/\">Back to Acme &lt;Accounts&gt;</a>")
        #expect(unknown.body.contains("<title>The account was not connected · Acme &lt;Accounts&gt;</title>"))
        let refused = try #require(
            await TestHTTP.send(
                port: s.broker.port, method: "POST", target: "/disconnect",
                headers: H.html + [("Content-Type", "application/x-www-form-urlencoded")],
                body: "id=weibo%3A1&csrf=x"))
        #expect(refused.status == 403)
        #expect(refused.body.contains("<a class=\"button\" href=\"/broker/\">Back to Acme &lt;Accounts&gt;</a>"))
        let page = try await H.page(browser)
        #expect(page.body.contains("<h1>Acme &lt;Accounts&gt;</h1>"))
        #expect(page.body.contains("--accent:#6a1b9a;--on-accent:#fff;"))
        await s.broker.stop()
    }
}
