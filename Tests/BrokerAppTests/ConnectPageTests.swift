@testable import BrokerApp
import BrokerCrypto
import Foundation
import Testing

/// The connect page as rendered: escaping of every dynamic value, what each row offers, the style its policy allows.
@Suite struct ConnectPageTests {
    static let hostile = "\"><script>alert('x')</script><img src=x onerror=alert(1)>&amp;"

    static func make(accounts: [ConnectPage.AccountItem] = [], csrf: String? = "CSRF-TOKEN",
                     notice: ConnectPageNotice? = nil, hint: String? = nil) -> ConnectPage {
        ConnectPage(providers: [ConnectPage.ProviderItem(name: "weibo", missing: []),
                                ConnectPage.ProviderItem(name: "github", missing: ["GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET"])],
                    accounts: accounts, csrfToken: csrf, notice: notice, publicURLHint: hint)
    }

    static func account(uid: String = "3733034601", screenName: String? = nil,
                        status: ConnectPageStatus = ConnectPageStatus(state: .active, label: "expires in 3 h")) -> ConnectPage.AccountItem {
        ConnectPage.AccountItem(id: "weibo:" + uid, provider: "weibo", uid: uid, screenName: screenName, status: status)
    }

    @Test func escapingCoversTextAndBothQuoteStyles() {
        #expect(HTMLPage.escape("<a href=\"x\" title='y'>&</a>") == "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;")
        #expect(HTMLPage.escape("Zoë 微博 ✓") == "Zoë 微博 ✓")
        #expect(HTMLPage.escape("a\u{0}b\u{1B}c\td") == "a\u{FFFD}b\u{FFFD}c\td")
    }

    @Test func hostileAccountValuesNeverBecomeMarkup() {
        let html = Self.make(accounts: [Self.account(uid: Self.hostile, screenName: Self.hostile)],
                             notice: ConnectPageNotice(kind: .connected, accountID: "weibo:" + Self.hostile)).page().render()
        #expect(!html.contains("<script"))
        #expect(!html.contains("<img"))
        #expect(!html.contains("'x'"))
        #expect(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"))
        #expect(html.contains("&amp;amp;"))
        // Every attribute still closes where it should: the hostile quote is inert.
        #expect(html.contains("value=\"weibo:&quot;&gt;&lt;script&gt;"))
    }

    @Test func configuredProvidersAreLinksAndUnconfiguredOnesNameTheirSettings() throws {
        let html = Self.make().page().render()
        #expect(html.contains("<a class=\"button\" href=\"/authorize?provider=weibo\">Connect Weibo</a>"))
        #expect(html.contains("<button type=\"button\" class=\"button\" disabled aria-describedby=\"need-github\">Connect GitHub</button>"))
        #expect(html.contains("id=\"need-github\">Not set up yet: the broker needs <code>GITHUB_CLIENT_ID</code> and <code>GITHUB_CLIENT_SECRET</code>."))
        #expect(!html.contains("href=\"/authorize?provider=github\""))
        // Connectable first.
        let weibo = try #require(html.range(of: "data-provider=\"weibo\""))
        let github = try #require(html.range(of: "data-provider=\"github\""))
        #expect(weibo.lowerBound < github.lowerBound)
    }

    @Test func eachAccountOffersReconnectAndACSRFProtectedDisconnect() {
        let html = Self.make(accounts: [Self.account(screenName: "Ada")]).page().render()
        #expect(html.contains("data-account=\"weibo:3733034601\" data-status=\"active\""))
        #expect(html.contains("<span class=\"badge active\">active</span> expires in 3 h"))
        #expect(html.contains("Ada · user id 3733034601"))
        #expect(html.contains("href=\"/authorize?provider=weibo\" aria-label=\"Reconnect Weibo account Ada\">Reconnect</a>"))
        #expect(html.contains("<form method=\"post\" action=\"/disconnect\"><input type=\"hidden\" name=\"id\" value=\"weibo:3733034601\">"
                              + "<input type=\"hidden\" name=\"csrf\" value=\"CSRF-TOKEN\">"))
        #expect(!html.contains("id=\"no-accounts\""))
        #expect(!html.contains("method=\"get\""))
    }

    @Test func withoutASessionThereIsNothingToDisconnect() {
        let empty = Self.make(csrf: nil).page().render()
        #expect(empty.contains("id=\"no-accounts\""))
        #expect(!empty.contains("/disconnect"))
    }

    @Test func statesOtherThanActiveAskForReconnect() {
        let html = Self.make(accounts: [
            Self.account(uid: "1", status: ConnectPageStatus(state: .expired, label: "expired")),
            Self.account(uid: "2", status: ConnectPageStatus(state: .reauthorizationRequired, label: "reauthorization required")),
        ]).page().render()
        #expect(html.contains("<span class=\"badge expired\">expired</span></span>"))
        #expect(html.contains("<span class=\"badge reauthorization\">reauthorization required</span></span>"))
        // The label is not repeated after a badge that already says it, and Reconnect becomes the primary button.
        #expect(!html.contains("class=\"button secondary\""))
    }

    @Test func noticesSayWhatHappenedOnce() {
        let connected = Self.make(notice: ConnectPageNotice(kind: .connected, accountID: "weibo:42")).page().render()
        #expect(connected.contains("role=\"status\">Connected Weibo account 42.</p>"))
        let unrevoked = Self.make(notice: ConnectPageNotice(kind: .disconnectedUnrevoked, accountID: "github:7")).page().render()
        #expect(unrevoked.contains("Disconnected GitHub account 7 here, but the provider did not confirm"))
        #expect(!Self.make().page().render().contains("role=\"status\""))
    }

    @Test func noticesSplitTheAccountIDAtItsFirstColonByte() {
        let colons = Self.make(notice: ConnectPageNotice(kind: .connected, accountID: "github:a:b")).page().render()
        #expect(colons.contains("Connected GitHub account a:b.</p>"))
        // ":" followed by a combining mark is one Character; the split still finds the colon.
        let mark = Self.make(notice: ConnectPageNotice(kind: .connected, accountID: "github:\u{301}x")).page().render()
        #expect(mark.contains("Connected GitHub account \u{301}x.</p>"))
        let bare = Self.make(notice: ConnectPageNotice(kind: .connected, accountID: "github")).page().render()
        #expect(bare.contains("Connected GitHub account .</p>"))
    }

    @Test func theInlineSheetIsExactlyWhatThePolicyHashes() throws {
        let html = Self.make().page().render()
        let start = try #require(html.range(of: "<style>"))
        let end = try #require(html.range(of: "</style>"))
        let sheet = String(html[start.upperBound..<end.lowerBound])
        let hash = "'sha256-" + Base64.encode(SHA256.hash(Array(sheet.utf8))) + "'"
        #expect(HTMLPage.contentSecurityPolicy.contains("style-src " + hash + ";"))
        #expect(!html.contains("<script"))
        #expect(!html.contains("http://") && !html.contains("https://"))
    }

    @Test(arguments: [
        ("127.0.0.1:8080", "http://localhost:8080", true), ("localhost:8080", "http://localhost:8080", false),
        ("LOCALHOST:8080", "http://localhost:8080", false), ("localhost:9090", "http://localhost:8080", true),
        ("[::1]:8080", "http://localhost:8080", true), ("127.0.0.1", "http://127.0.0.1:80", false),
        ("broker:8080", "https://broker.example.com", false), ("127.0.0.1:8080", "https://broker.example.com", false),
        ("evil.example", "http://localhost:8080", false),
    ])
    func aLoopbackAddressOtherThanThePublicOneGetsAHint(host: String, publicURL: String, hinted: Bool) {
        #expect((ConnectPage.publicURLHint(requestHost: host, publicURL: publicURL) != nil) == hinted)
    }

    @Test func theHintLinksToThePublicAddress() {
        let html = Self.make(hint: "http://localhost:8080").page().render()
        #expect(html.contains("<a href=\"http://localhost:8080/\">http://localhost:8080/</a>"))
    }
}
