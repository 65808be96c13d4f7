import BrokerCore
import Foundation
import Testing

@testable import BrokerApp

/// The bytes of `GET /account`'s body and of an account's summary: field order, escaping, nulls, dates, tags and the
/// kept extras, byte for byte, as clients parse them.
@Suite struct AccountJSONTests {
    /// An account with every field the renderings show, and values that need escaping.
    static let rich = Account(
        provider: "acme", uid: "u\"1\\2", accessToken: Secret("tok\nen\u{1}"), tokenType: "bearer", scope: "read write",
        refreshToken: Secret("NEVER-SHOWN"), tokenSecret: Secret("s/ecret"), screenName: "Zoë \u{7F}",
        expiresAt: Date(timeIntervalSince1970: 1_800_000_000), createdAt: Date(timeIntervalSince1970: 1_700_000_000.5),
        updatedAt: Date(timeIntervalSince1970: 1_700_000_123.25), refreshedAt: Date(timeIntervalSince1970: -94_607_999.999),
        idToken: Secret("h.p.s"), extras: #"{ "instance_url":"https://x.example","n":1}"#,
        endUser: EndUser(id: "user-7", email: "a@b.example", name: "A\tB"), tags: ["team": "core", "env": "prod\"x"])

    @Test func theFullRenderingHasEveryFieldInOrderEscaped() {
        let expected =
            #"{"id":"acme:u\"1\\2","provider":"acme","uid":"u\"1\\2","access_token":"tok\nen\u0001","token_secret":"s/ecret","#
            + #""token_type":"bearer","scope":"read write","scopes":["read","write"],"expires_at":"2027-01-15T08:00:00Z","#
            + #""created_at":"2023-11-14T22:13:20.500Z","updated_at":"2023-11-14T22:15:23.250Z","#
            + #""refreshed_at":"1967-01-02T00:00:00.001Z","status":"active","screen_name":"Zoë \u007f","#
            + #""end_user_id":"user-7","end_user_email":"a@b.example","end_user_name":"A\tB","#
            + #""tags":{"env":"prod\"x","team":"core"},"raw":{"id_token":"h.p.s","instance_url":"https://x.example","n":1}}"#
        #expect(AccountJSON.full(Self.rich, status: "active") == expected)
        #expect(AccountJSON.fullBytes(Self.rich, status: "active") == Array(expected.utf8))
    }

    @Test func theSummaryLeavesEverySecretOut() {
        let expected =
            #"{"id":"acme:u\"1\\2","provider":"acme","uid":"u\"1\\2","token_type":"bearer","scope":"read write","scopes":["read","write"],"#
            + #""expires_at":"2027-01-15T08:00:00Z","created_at":"2023-11-14T22:13:20.500Z","#
            + #""updated_at":"2023-11-14T22:15:23.250Z","refreshed_at":"1967-01-02T00:00:00.001Z","status":"expired","#
            + #""screen_name":"Zoë \u007f","end_user_id":"user-7","end_user_email":"a@b.example","end_user_name":"A\tB","#
            + #""tags":{"env":"prod\"x","team":"core"}}"#
        #expect(AccountJSON.summary(Self.rich, status: "expired") == expected)
    }

    @Test func absentFieldsAreNullAndTagsAnEmptyObject() {
        let bare = Account(
            provider: "weibo", uid: "1", accessToken: Secret("t"), createdAt: Date(timeIntervalSince1970: 0),
            updatedAt: Date(timeIntervalSince1970: 0))
        let expected =
            #"{"id":"weibo:1","provider":"weibo","uid":"1","access_token":"t","token_type":null,"scope":null,"scopes":null,"#
            + #""expires_at":null,"created_at":"1970-01-01T00:00:00Z","updated_at":"1970-01-01T00:00:00Z","#
            + #""refreshed_at":null,"status":"active","end_user_id":null,"end_user_email":null,"end_user_name":null,"#
            + #""tags":{}}"#
        #expect(AccountJSON.full(bare, status: "active") == expected)
    }

    @Test func keptExtrasThatAreNotOneObjectAreLeftOut() {
        var account = Self.rich
        account.idToken = nil
        account.extras = "[1,2]"
        #expect(AccountJSON.full(account, status: "active").hasSuffix(#""raw":{}}"#))
        account.extras = "{ }"
        #expect(AccountJSON.full(account, status: "active").hasSuffix(#""raw":{ }}"#) == false)
        #expect(AccountJSON.full(account, status: "active").hasSuffix(#""raw":{}}"#))
    }
}
