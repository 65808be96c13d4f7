import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Disconnect: `GET /disconnect` only asks; `POST /disconnect` deletes, only with this browser's session and the
/// confirmation's token; otherwise 403 and nothing deleted.
@Suite(.scoped) struct ConnectPageDisconnectTests {
    typealias H = ConnectPageHandlersTests

    /// A broker with the account connected in `browser`; returns the confirmation page's CSRF token.
    static func connected(_ s: WeiboFlowTests.Setup, _ browser: Browser, uid: String = "3733034601") async throws -> String {
        _ = try await H.connect(browser)
        let page = try await H.page(browser)
        #expect(page.body.contains("href=\"/disconnect?id=weibo%3A\(uid)\""))
        return try #require(H.csrf(in: try await H.confirmation(browser, id: "weibo:" + uid).body))
    }

    static func stillStored(_ s: WeiboFlowTests.Setup) async -> Bool {
        await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:3733034601", headers: H.api)?.status == 200
    }

    @Test func disconnectRevokesDeletesForgetsAndSaysSo() async throws {
        let s = try WeiboFlowTests.setUp()
        let browser = s.browser
        let token = try await Self.connected(s, browser)
        let reply = try #require(await H.disconnect(browser, port: s.broker.port, body: "id=weibo%3A3733034601&csrf=" + token))
        #expect(reply.status == 303)
        #expect(reply.header("Location") == "/")
        #expect(s.weibo.revokeCalls == 1)
        #expect(await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:3733034601", headers: H.api)?.status == 404)
        let page = try await H.page(browser)
        #expect(page.body.contains("role=\"status\">Disconnected Weibo account 3733034601."))
        #expect(page.body.contains("id=\"no-accounts\""))
        // The session no longer lists it: the browser cannot read it any more.
        #expect(await browser.get("/account?id=weibo:3733034601")?.status == 401)
        // The old token was bound to the old session cookie.
        #expect(await H.disconnect(browser, port: s.broker.port, body: "id=weibo%3A3733034601&csrf=" + token)?.status == 403)
        #expect(s.broker.log.contains("account deleted"))
    }

    @Test(arguments: [
        "id=weibo%3A3733034601", "id=weibo%3A3733034601&csrf=", "id=weibo%3A3733034601&csrf=AAAA",
        "id=weibo%3A3733034601&csrf=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ])
    func aMissingOrWrongTokenIs403AndNothingIsDeleted(body: String) async throws {
        let s = try WeiboFlowTests.setUp()
        let browser = s.browser
        _ = try await Self.connected(s, browser)
        let reply = try #require(await H.disconnect(browser, port: s.broker.port, body: body))
        #expect(reply.status == 403)
        H.expectPageHeaders(reply)
        #expect(reply.body.contains("Open the page again and retry."))
        #expect(s.weibo.revokeCalls == 0)
        #expect(await Self.stillStored(s))
        #expect(try await H.page(browser).body.contains("data-account=\"weibo:3733034601\""))
    }

    @Test func anotherBrowsersValidTokenCannotDisconnectThisBrowsersAccount() async throws {
        let s = try WeiboFlowTests.setUp()
        let owner = s.browser
        _ = try await Self.connected(s, owner)
        // The other browser connects an account of its own, so it has a session and a valid token.
        s.weibo.set { $0.users = .fixed("42") }
        let other = Browser(brokerPort: s.broker.port, providerPort: s.weibo.port)
        let otherToken = try await Self.connected(s, other, uid: "42")
        let reply = try #require(await H.disconnect(other, port: s.broker.port, body: "id=weibo%3A3733034601&csrf=" + otherToken))
        #expect(reply.status == 403)
        #expect(reply.body.contains("This browser did not connect that account"))
        #expect(s.weibo.revokeCalls == 0)
        #expect(await Self.stillStored(s))
    }

    @Test func withoutASessionCookieItIs403() async throws {
        let s = try WeiboFlowTests.setUp()
        let token = try await Self.connected(s, s.browser)
        let stranger = Browser(brokerPort: s.broker.port, providerPort: s.weibo.port)
        let reply = try #require(await H.disconnect(stranger, port: s.broker.port, body: "id=weibo%3A3733034601&csrf=" + token))
        #expect(reply.status == 403)
        // A client without text/html in Accept gets the refusal as JSON.
        let curl = await TestHTTP.send(
            port: s.broker.port, method: "POST", target: "/disconnect",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: "id=weibo%3A3733034601&csrf=" + token)
        #expect(curl?.status == 403)
        #expect(curl?.body.contains("\"error\":\"forbidden\"") == true)
        #expect(await Self.stillStored(s))
    }

    @Test func theDisconnectLinkOnlyAsks() async throws {
        let s = try WeiboFlowTests.setUp()
        let browser = s.browser
        let token = try await Self.connected(s, browser)
        let reply = try await H.confirmation(browser)
        #expect(reply.status == 200)
        H.expectPageHeaders(reply)
        #expect(reply.body.contains("<h1>Disconnect Weibo account 3733034601?</h1>"))
        #expect(reply.body.contains("asks Weibo to revoke the access it granted"))
        #expect(reply.body.contains("<input type=\"hidden\" name=\"csrf\" value=\"\(token)\">"))
        #expect(reply.body.contains("<a class=\"button secondary\" href=\"/\">Cancel</a>"))
        // Asking again, even with a token in the query, deletes nothing.
        #expect(await browser.get("/disconnect?id=weibo%3A3733034601&csrf=" + token, headers: H.html)?.status == 200)
        #expect(s.weibo.revokeCalls == 0)
        #expect(await Self.stillStored(s))
    }

    @Test func theConfirmationIsOnlyForThisBrowsersAccounts() async throws {
        let s = try WeiboFlowTests.setUp()
        let browser = s.browser
        _ = try await Self.connected(s, browser)
        let other = try await H.confirmation(browser, id: "weibo:42")
        #expect(other.status == 403)
        #expect(other.body.contains("This browser did not connect that account"))
        #expect(!other.body.contains("name=\"csrf\""))
        let stranger = Browser(brokerPort: s.broker.port, providerPort: s.weibo.port)
        #expect(try await H.confirmation(stranger).status == 403)
        #expect(try #require(await browser.get("/disconnect", headers: H.html)).status == 403)
    }

    @Test func anAccountDeletedThroughTheAPIJustLeavesTheList() async throws {
        let s = try WeiboFlowTests.setUp()
        let browser = s.browser
        let token = try await Self.connected(s, browser)
        #expect(
            await TestHTTP.send(port: s.broker.port, method: "DELETE", target: "/account?id=weibo:3733034601", headers: H.api)?.status
                == 204)
        #expect(try await H.page(browser).body.contains("id=\"no-accounts\""))
        let reply = await H.disconnect(browser, port: s.broker.port, body: "id=weibo%3A3733034601&csrf=" + token)
        #expect(reply?.status == 303)
    }
}
