import BrokerCrypto
import Foundation
import Testing

@testable import BrokerApp

/// The connect page as rendered: escaping of every dynamic value, what each row offers, the style its policy allows.
@Suite struct ConnectPageTests {
    static let hostile = "\"><script>alert('x')</script><img src=x onerror=alert(1)>&amp;"

    static func make(
        accounts: [ConnectPage.AccountItem] = [], notice: ConnectPageNotice? = nil, hint: String? = nil,
        providers: [ConnectPage.ProviderItem] = [ConnectPage.ProviderItem(name: "weibo", displayName: "Weibo")],
        appearance: PageAppearance = .standard
    ) -> ConnectPage {
        ConnectPage(
            providers: providers, accounts: accounts, displayNames: ["weibo": "Weibo", "github": "GitHub"],
            notice: notice, publicURLHint: hint, appearance: appearance)
    }

    static func account(
        uid: String = "3733034601", screenName: String? = nil,
        status: ConnectPageStatus = ConnectPageStatus(state: .active, label: "expires in 3 h")
    ) -> ConnectPage.AccountItem {
        ConnectPage.AccountItem(id: "weibo:" + uid, provider: "weibo", uid: uid, screenName: screenName, status: status)
    }

    @Test func escapingCoversTextAndBothQuoteStyles() {
        #expect(HTMLPage.escape("<a href=\"x\" title='y'>&</a>") == "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;")
        #expect(HTMLPage.escape("Zoë 微博 ✓") == "Zoë 微博 ✓")
        #expect(HTMLPage.escape("a\u{0}b\u{1B}c\td") == "a\u{FFFD}b\u{FFFD}c\td")
    }

    @Test func hostileAccountValuesNeverBecomeMarkup() {
        let html = Self.make(
            accounts: [Self.account(uid: Self.hostile, screenName: Self.hostile)],
            notice: ConnectPageNotice(kind: .connected, accountID: "weibo:" + Self.hostile)
        ).page().render()
        #expect(!html.contains("<script"))
        #expect(!html.contains("<img"))
        #expect(!html.contains("'x'"))
        #expect(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"))
        #expect(html.contains("&amp;amp;"))
        // Every attribute still closes where it should: the hostile quote is inert, and in the link it is percent-encoded.
        #expect(html.contains("data-account=\"weibo:&quot;&gt;&lt;script&gt;"))
        #expect(html.contains("href=\"/disconnect?id=weibo%3A%22%3E%3Cscript%3E"))
    }

    @Test func providersAreShownByTheirDisplayNameWithTheirIcon() throws {
        let html = Self.make(providers: [
            ConnectPage.ProviderItem(name: "weibo", displayName: "Weibo"),
            ConnectPage.ProviderItem(name: "acme", displayName: "Acme \"Cloud\" <ID>", iconURL: "https://cdn.example/acme.png?v=1&s=2"),
        ]).page().render()
        #expect(html.contains("<a class=\"button\" href=\"/authorize?provider=weibo\">Connect Weibo</a>"))
        #expect(
            html.contains(
                "<span class=\"name\"><img class=\"icon\" src=\"https://cdn.example/acme.png?v=1&amp;s=2\" alt=\"\" "
                    + "width=\"24\" height=\"24\">Acme &quot;Cloud&quot; &lt;ID&gt;</span>"))
        #expect(html.contains(">Connect Acme &quot;Cloud&quot; &lt;ID&gt;</a>"))
        #expect(!html.contains("disabled"))
        let weibo = try #require(html.range(of: "data-provider=\"weibo\""))
        let acme = try #require(html.range(of: "data-provider=\"acme\""))
        #expect(weibo.lowerBound < acme.lowerBound)
    }

    @Test func withNoProviderSetUpTheVisitorIsToldSo() {
        let html = Self.make(providers: []).page().render()
        #expect(html.contains("id=\"no-providers\">No provider is set up in this broker yet"))
        #expect(!html.contains("Choose Connect"))
        #expect(!html.contains("/authorize"))
    }

    @Test func eachAccountOffersReconnectAndADisconnectThatAsksFirst() {
        let html = Self.make(accounts: [Self.account(screenName: "Ada")]).page().render()
        #expect(html.contains("data-account=\"weibo:3733034601\" data-status=\"active\""))
        #expect(html.contains("<span class=\"badge active\">active</span> expires in 3 h"))
        #expect(html.contains("Ada · user id 3733034601"))
        #expect(html.contains("href=\"/authorize?provider=weibo\" aria-label=\"Reconnect Weibo account Ada\">Reconnect</a>"))
        #expect(
            html.contains(
                "<a class=\"button danger\" href=\"/disconnect?id=weibo%3A3733034601\" "
                    + "aria-label=\"Disconnect Weibo account Ada\">Disconnect</a>"))
        // The page itself deletes nothing: no form, no token.
        #expect(!html.contains("<form"))
        #expect(!html.contains("csrf"))
        #expect(!html.contains("id=\"no-accounts\""))
    }

    @Test func anAccountOfAProviderNoLongerSetUpCanBeDisconnectedButNotReconnected() {
        var account = Self.account()
        account.provider = "github"
        account.id = "github:7"
        account.canReconnect = false
        let html = Self.make(accounts: [account]).page().render()
        #expect(html.contains("<span class=\"name\">GitHub<span class=\"sub\">"))
        var iconic = Self.account()
        iconic.iconURL = "https://cdn.example/w.png"
        #expect(
            Self.make(accounts: [iconic]).page().render().contains(
                "<span class=\"name\"><img class=\"icon\" src=\"https://cdn.example/w.png\" alt=\"\" width=\"24\" height=\"24\">Weibo<span class=\"sub\">"
            ))
        #expect(!html.contains("Reconnect"))
        #expect(html.contains("href=\"/disconnect?id=github%3A7\""))
    }

    @Test func withoutASessionThereIsNothingToDisconnect() {
        let empty = Self.make().page().render()
        #expect(empty.contains("id=\"no-accounts\""))
        #expect(!empty.contains("/disconnect"))
    }

    @Test func theConfirmationPostsTheDeleteWithTheTokenAndCancelGoesBack() {
        let page = DisconnectConfirmation(
            accountID: "weibo:" + Self.hostile, providerName: "Weibo", who: Self.hostile, revokes: true,
            csrfToken: "CSRF-TOKEN", appearance: PageAppearance(basePath: "/broker"))
        let html = page.page().render()
        #expect(html.contains("<h1>Disconnect Weibo account &quot;&gt;&lt;script&gt;"))
        #expect(
            html.contains(
                "<form method=\"post\" action=\"/broker/disconnect\" class=\"confirm\">"
                    + "<input type=\"hidden\" name=\"id\" value=\"weibo:&quot;&gt;&lt;script&gt;"))
        #expect(html.contains("<input type=\"hidden\" name=\"csrf\" value=\"CSRF-TOKEN\">"))
        #expect(html.contains("<button type=\"submit\" class=\"button destructive\">Disconnect</button>"))
        #expect(html.contains("<a class=\"button secondary\" href=\"/broker/\">Cancel</a>"))
        #expect(html.contains("asks Weibo to revoke"))
        #expect(!html.contains("<script"))
        let keeps = DisconnectConfirmation(accountID: "twitter:1", providerName: "Twitter", who: "1", revokes: false, csrfToken: "T")
        #expect(keeps.page().render().contains("Twitter keeps the app in your account settings"))
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
        #expect(PageAppearance.standard.contentSecurityPolicy.contains("style-src " + hash + ";"))
        #expect(PageAppearance.standard.contentSecurityPolicy.contains("img-src data:;"))
        #expect(!html.contains("<script"))
        #expect(!html.contains("http://") && !html.contains("https://"))
    }

    @Test func aTitleAndAnAccentChangeThePageAndThePolicyFollows() throws {
        let appearance = PageAppearance(
            title: "Acme <Accounts> & \"Co\"", accent: try #require(PageAccent(hex: "#ffd700")),
            iconURLs: ["https://cdn.example/a.png", "https://CDN.example:8443/b.svg", "data:image/png;base64,AAAA"])
        let html = Self.make(appearance: appearance).page().render()
        #expect(html.contains("<title>Acme &lt;Accounts&gt; &amp; &quot;Co&quot;</title>"))
        #expect(html.contains("<h1>Acme &lt;Accounts&gt; &amp; &quot;Co&quot;</h1>"))
        let start = try #require(html.range(of: "<style>"))
        let end = try #require(html.range(of: "</style>"))
        let sheet = String(html[start.upperBound..<end.lowerBound])
        #expect(sheet.hasPrefix(":root{color-scheme:light;--accent:#ffd700;--on-accent:#1b1f24;"))
        let hash = "'sha256-" + Base64.encode(SHA256.hash(Array(sheet.utf8))) + "'"
        #expect(appearance.contentSecurityPolicy.contains("style-src " + hash + ";"))
        #expect(appearance.contentSecurityPolicy.contains("img-src data: https://cdn.example https://cdn.example:8443;"))
        #expect(!PageAppearance.standard.contentSecurityPolicy.contains(hash))
    }

    @Test(arguments: ["#0b57d0", "#ffd700", "#ffffff", "#000000", "#00ff00", "#e91e63", "#808080"])
    func everyAccentKeepsItsTextReadable(hex: String) throws {
        let accent = try #require(PageAccent(hex: hex))
        let fill = try #require(PageAccent.RGB(hex: accent.fill))
        let label = try #require(PageAccent.RGB(hex: accent.onFill == "#fff" ? "#ffffff" : accent.onFill))
        #expect(fill.contrast(with: label) >= 4.5)
        let text = try #require(PageAccent.RGB(hex: accent.text))
        for background in PageAccent.lightBackgrounds { #expect(text.contrast(with: background) >= 4.5) }
        #expect(PageAccent(hex: "0b57d0") == nil && PageAccent(hex: "#0b57d") == nil && PageAccent(hex: "#0b57dz") == nil)
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
