import BrokerCrypto
import Testing

@testable import BrokerApp

/// The one-time notice cookie: signed, so no other site or sibling host can write words onto the page.
@Suite struct ConnectPageNoticeTests {
    static let secret = Array("cookie-secret-0123456789abcdef-0123".utf8)

    @Test(arguments: [ConnectPageNotice.Kind.connected, .disconnected, .disconnectedUnrevoked])
    func aNoticeSurvivesTheRoundTrip(kind: ConnectPageNotice.Kind) {
        let notice = ConnectPageNotice(kind: kind, accountID: "weibo:3733034601")
        let value = notice.encode(secret: Self.secret)
        #expect(ConnectPageNotice.decode(value, secret: Self.secret) == notice)
        // Cookie-safe: base64url and one dot (RFC 6265 §4.1.1 cookie-octet).
        #expect(value.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." })
    }

    @Test func anIDWithBarsAndColonsSurvives() {
        let notice = ConnectPageNotice(kind: .connected, accountID: "custom:a|b:c")
        #expect(ConnectPageNotice.decode(notice.encode(secret: Self.secret), secret: Self.secret) == notice)
    }

    @Test func aForgedOrTamperedNoticeIsIgnored() {
        let value = ConnectPageNotice(kind: .connected, accountID: "weibo:1").encode(secret: Self.secret)
        #expect(ConnectPageNotice.decode(value, secret: Array("another-secret-0123456789abcdef-012".utf8)) == nil)
        let forged = Base64URL.encode(Array("connected|weibo:You have been hacked".utf8)) + "." + value.split(separator: ".")[1]
        #expect(ConnectPageNotice.decode(forged, secret: Self.secret) == nil)
        for bad in ["", ".", "abc", value + ".x", String(value.dropLast(2))] {
            #expect(ConnectPageNotice.decode(bad, secret: Self.secret) == nil)
        }
    }

    @Test func anUnknownKindIsIgnored() {
        let payload = Array("exploded|weibo:1".utf8)
        let mac = HMAC.sha256(key: Self.secret, message: Array("notice|".utf8) + payload)
        #expect(ConnectPageNotice.decode(Base64URL.encode(payload) + "." + Base64URL.encode(mac), secret: Self.secret) == nil)
    }

    @Test func theCookieIsShortLivedHttpOnlyAndSiteWide() {
        let header = ConnectPageNotice(kind: .connected, accountID: "weibo:1").setCookie(
            secret: Self.secret, cookies: CookieHeader(publicURL: "https://broker.example"))
        #expect(header.hasPrefix("tb_notice="))
        #expect(
            header.contains("; Path=/;") && header.contains("Max-Age=60") && header.contains("HttpOnly")
                && header.contains("SameSite=Lax") && header.hasSuffix("; Secure"))
    }
}
