import BrokerCore
import Foundation
import Testing

/// The Authorization header the signer writes and the parser fake providers use, plus the default nonce and clock.
struct OAuth1SignerHeaderTests {
    static let credentials = OAuth1Credentials(consumerKey: "dpf43f3p2l4k3l03", consumerSecret: "kd94hf93k423kf44")

    @Test("header layout: scheme, realm first, sorted and percent-encoded quoted values")
    func layout() {
        let signer = OAuth1Signer(credentials: Self.credentials, nonce: { "wIjqoS" }, timestamp: { 137131200 })
        let header = signer.authorizationHeader(
            method: "POST", url: "https://photos.example.net/initiate",
            extraOAuthParameters: [("oauth_callback", "http://printer.example.com/ready")],
            includeVersion: false, realm: "Photos")
        // RFC 5849 §3.5.1 / §1.2: the example header, in sorted order.
        #expect(
            header
                == "OAuth realm=\"Photos\", oauth_callback=\"http%3A%2F%2Fprinter.example.com%2Fready\", oauth_consumer_key=\"dpf43f3p2l4k3l03\", oauth_nonce=\"wIjqoS\", oauth_signature=\"74KNZJeDHnMBp0EMJ9ZHt%2FXKycU%3D\", oauth_signature_method=\"HMAC-SHA1\", oauth_timestamp=\"137131200\""
        )
    }

    @Test("a realm with quotes survives the round trip and is left out of the parsed parameters")
    func realmEscaping() throws {
        let signer = OAuth1Signer(credentials: Self.credentials, nonce: { "n" }, timestamp: { 1 })
        let header = signer.authorizationHeader(method: "GET", url: "https://example.com/", realm: "say \"hi\" \\ bye")
        #expect(header.hasPrefix("OAuth realm=\"say \\\"hi\\\" \\\\ bye\", "))
        let parsed = try #require(OAuth1Signer.parseAuthorizationHeader(header))
        #expect(parsed.count == 6)
        #expect(!parsed.contains { $0.0 == "realm" })
    }

    @Test("Twitter's 'Authorizing a request' header parses with decoded values")
    func parseTwitterExample() throws {
        let header =
            "OAuth oauth_consumer_key=\"xvz1evFS4wEEPTGEFPHBog\", oauth_nonce=\"kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg\", oauth_signature=\"tnnArxj06cWHq44gCs1OSKk%2FjLY%3D\", oauth_signature_method=\"HMAC-SHA1\", oauth_timestamp=\"1318622958\", oauth_token=\"370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb\", oauth_version=\"1.0\""
        let parsed = try #require(OAuth1Signer.parseAuthorizationHeader(header))
        #expect(
            parsed.map(\.0) == [
                "oauth_consumer_key", "oauth_nonce", "oauth_signature", "oauth_signature_method",
                "oauth_timestamp", "oauth_token", "oauth_version",
            ])
        #expect(parsed[2].1 == "tnnArxj06cWHq44gCs1OSKk/jLY=")
    }

    @Test("lenient where RFC 5849 §3.5.1 allows: scheme case, whitespace, empty elements")
    func parseLenient() throws {
        let parsed = try #require(OAuth1Signer.parseAuthorizationHeader("  oauth  realm=\"x\" ,a = \"1%2B1+\",,\tb=\"\" "))
        #expect(parsed.map(\.0) == ["a", "b"])
        #expect(parsed.map(\.1) == ["1+1+", ""])
        #expect(OAuth1Signer.parseAuthorizationHeader("OAuth")?.isEmpty == true)
    }

    @Test(
        "malformed headers are rejected",
        arguments: [
            "", "Bearer abc", "OAuthx a=\"1\"", "OAuth a=1", "OAuth a=\"1", "OAuth =\"1\"", "OAuth a\"1\"",
            "OAuth a=\"1\" b=\"2\"", "OAuth a=\"%ZZ\"", "OAuth a=\"%FF\"", "Basic realm=\"x\"",
        ])
    func parseRejects(header: String) {
        #expect(OAuth1Signer.parseAuthorizationHeader(header) == nil)
    }

    @Test("the default nonce carries at least 128 bits and is fresh on every call")
    func defaultNonce() throws {
        let signer = OAuth1Signer(credentials: Self.credentials)
        var nonces = Set<String>()
        for _ in 0..<100 {
            let parsed = try #require(
                OAuth1Signer.parseAuthorizationHeader(signer.authorizationHeader(method: "GET", url: "https://example.com/")))
            let nonce = try #require(parsed.first { $0.0 == "oauth_nonce" }?.1)
            // Hex digits carry 4 bits each.
            #expect(nonce.count * 4 >= 128)
            let isHex = nonce.allSatisfy { $0.isHexDigit }
            #expect(isHex)
            nonces.insert(nonce)
        }
        #expect(nonces.count == 100)
        #expect(OAuth1Signer.randomNonce() != OAuth1Signer.randomNonce())
    }

    @Test("the default timestamp is the current Unix time in seconds")
    func defaultTimestamp() throws {
        let signer = OAuth1Signer(credentials: Self.credentials)
        let before = Int(Date().timeIntervalSince1970)
        let parsed = try #require(
            OAuth1Signer.parseAuthorizationHeader(signer.authorizationHeader(method: "GET", url: "https://example.com/")))
        let after = Int(Date().timeIntervalSince1970)
        let timestamp = try #require(parsed.first { $0.0 == "oauth_timestamp" }.flatMap { Int($0.1) })
        #expect((before...after).contains(timestamp))
    }

    @Test("changing any signed input changes the signature")
    func signatureCoversInputs() {
        let signer = OAuth1Signer(credentials: Self.credentials, nonce: { "n" }, timestamp: { 1 })
        let base = signer.authorizationHeader(method: "POST", url: "https://example.com/a?x=1", formParameters: [("b", "2")])
        let variants = [
            signer.authorizationHeader(method: "GET", url: "https://example.com/a?x=1", formParameters: [("b", "2")]),
            signer.authorizationHeader(method: "POST", url: "https://example.com/a?x=2", formParameters: [("b", "2")]),
            signer.authorizationHeader(method: "POST", url: "https://example.com/b?x=1", formParameters: [("b", "2")]),
            signer.authorizationHeader(method: "POST", url: "https://example.com/a?x=1", formParameters: [("b", "3")]),
            signer.authorizationHeader(
                method: "POST", url: "https://example.com/a?x=1", formParameters: [("b", "2")], includeVersion: false),
        ]
        for variant in variants { #expect(variant != base) }
        // realm is not signed (RFC 5849 §3.4.1.3.1), so adding one keeps the signature.
        let withRealm = signer.authorizationHeader(
            method: "POST", url: "https://example.com/a?x=1", formParameters: [("b", "2")], realm: "R")
        #expect(withRealm == base.replacingOccurrences(of: "OAuth ", with: "OAuth realm=\"R\", "))
    }
}
