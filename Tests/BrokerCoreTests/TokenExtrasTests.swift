import Foundation
import Testing

@testable import BrokerCore

/// What of a token answer is kept besides the tokens, and how `refresh_token_expires_in` is checked where it enters.
struct TokenExtrasTests {
    private static let step = "token_exchange"

    private func grant(_ body: String, layout: TokenAnswerLayout = TokenAnswerLayout()) throws -> TokenGrant {
        try OAuth2ResponseValidator.tokenGrant(
            from: UpstreamResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(body.utf8)),
            step: Self.step, layout: layout)
    }

    private func object(_ text: String?) throws -> [String: Any] {
        let text = try #require(text)
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func everyOtherTopLevelFieldIsKeptAndTheIDTokenApart() throws {
        let answer = try grant(
            #"{"access_token":"at-SENTINEL","refresh_token":"rt-SENTINEL","token_type":"Bearer","expires_in":7200,"#
                + #""refresh_token_expires_in":15897600,"scope":"api refresh_token","id_token":"eyJ.eyJ.sig-SENTINEL","#
                + #""instance_url":"https://na1.example.com","issued_at":"1278448832702","nested":{"a":[1,true,null]}}"#)
        #expect(answer.idToken?.value == "eyJ.eyJ.sig-SENTINEL")
        #expect(answer.refreshTokenExpiresIn == 15_897_600)
        #expect(!answer.extrasDropped)
        let extras = try object(answer.extras)
        #expect(Set(extras.keys) == ["scope", "instance_url", "issued_at", "nested"])
        #expect(extras["instance_url"] as? String == "https://na1.example.com")
        #expect(!(answer.extras ?? "").contains("SENTINEL"))
    }

    @Test func anAnswerWithOnlyTheTokensHasNoExtras() throws {
        let answer = try grant(#"{"access_token":"at","token_type":"bearer","expires_in":3600,"refresh_token":"rt"}"#)
        #expect(answer.extras == nil && answer.idToken == nil && answer.refreshTokenExpiresIn == nil)
    }

    @Test func theObjectTheLayoutReadsTokensFromIsNeverKept() throws {
        // Slack: the user token sits under `authed_user`.
        let answer = try grant(
            #"{"ok":true,"app_id":"A1","authed_user":{"id":"U1","access_token":"xoxp-SENTINEL","refresh_token":"xoxe-SENTINEL"},"#
                + #""team":{"id":"T1"}}"#,
            layout: TokenAnswerLayout(tokensAt: "authed_user", userIDFields: ["team.id", "authed_user.id"]))
        #expect(answer.accessToken.value == "xoxp-SENTINEL")
        #expect(Set(try object(answer.extras).keys) == ["ok", "app_id", "team"])
    }

    @Test func anIDTokenThatIsNotAHeaderSafeStringIsNotKept() throws {
        #expect(try grant(#"{"access_token":"at","id_token":{"not":"a token"}}"#).idToken == nil)
        #expect(try grant(#"{"access_token":"at","id_token":"two words"}"#).idToken == nil)
    }

    @Test func overSixteenKilobytesNothingIsKept() throws {
        let blob = String(repeating: "x", count: TokenExtras.maximumBytes)
        let answer = try grant(#"{"access_token":"at","id_token":"eyJ.e30.sig","blob":"\#(blob)"}"#)
        #expect(answer.extrasDropped && answer.extras == nil && answer.idToken == nil)
        #expect(answer.accessToken.value == "at")
    }

    @Test func refreshTokenExpiresInIsCheckedAsExpiresInIs() throws {
        #expect(try grant(#"{"access_token":"at","refresh_token_expires_in":"3600"}"#).refreshTokenExpiresIn == 3600)
        #expect(
            try grant(#"{"access_token":"at","refresh_token_expires_in":99999999999999}"#).refreshTokenExpiresIn
                == TokenGrant.maximumLifetime)
        #expect(try grant(#"{"access_token":"at","refresh_token_expires_in":null}"#).refreshTokenExpiresIn == nil)
        for bad in [#"-1"#, #"1.5"#, #""soon""#, #"true"#] {
            #expect(throws: BrokerError.self, "\(bad)") { try grant(#"{"access_token":"at","refresh_token_expires_in":\#(bad)}"#) }
        }
    }

    @Test func aRefreshKeepsTheIDTokenAndInstanceURLItsAnswerLeavesOut() throws {
        let old = #"{"instance_url":"https://na1.example.com","signature":"old","team":"T1"}"#
        let merged = try object(TokenExtras.merged(old: old, new: #"{"signature":"new"}"#))
        #expect(merged["instance_url"] as? String == "https://na1.example.com")
        #expect(merged["signature"] as? String == "new" && merged["team"] == nil)
        let moved = try object(TokenExtras.merged(old: old, new: #"{"instance_url":"https://na2.example.com"}"#))
        #expect(moved["instance_url"] as? String == "https://na2.example.com")
        #expect(try object(TokenExtras.merged(old: old, new: nil)).keys.sorted() == ["instance_url"])
        #expect(TokenExtras.merged(old: nil, new: nil) == nil)
    }
}
