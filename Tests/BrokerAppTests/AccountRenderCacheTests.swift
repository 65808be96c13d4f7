import BrokerCore
import Foundation
import Testing

@testable import BrokerApp

/// `GET /account`'s body rendered from kept parts is the same bytes as one rendered from scratch, and a changed
/// account is never answered from parts made before the change.
@Suite struct AccountRenderCacheTests {
    /// The body as the inline path of reads renders it, through `cache`.
    static func body(_ account: Account, _ cache: AccountRenderCache, status: String = "active") -> String {
        let parts = cache.parts(of: account, id: account.id)
        return String(decoding: AccountJSON.fullBytes(account, status: status, parts: parts), as: UTF8.self)
    }

    @Test func keptPartsRenderTheSameBytesAsRenderingFromScratch() {
        let cache = AccountRenderCache()
        var bare = Account(
            provider: "weibo", uid: "1", accessToken: Secret("t"), createdAt: Date(timeIntervalSince1970: 0),
            updatedAt: Date(timeIntervalSince1970: 0))
        bare.settings = ["lang": "de"]
        bare.metadata = #"{"plan":"pro"}"#
        for account in [AccountJSONTests.rich, bare] {
            for status in ["active", "expired"] {
                // The first read makes the parts, the second uses them.
                #expect(Self.body(account, cache, status: status) == AccountJSON.full(account, status: status))
                #expect(Self.body(account, cache, status: status) == AccountJSON.full(account, status: status))
            }
        }
        #expect(cache.count == 2)
    }

    @Test func everyChangeToARenderedFieldRendersAgain() {
        let cache = AccountRenderCache()
        let original = AccountJSONTests.rich
        _ = Self.body(original, cache)
        var changes: [(inout Account) -> Void] = [
            { $0.accessToken = Secret("new-token") }, { $0.tokenSecret = nil }, { $0.tokenType = "mac" },
            { $0.scope = "read" }, { $0.scope = nil }, { $0.screenName = "Zoe\u{301}" },
            { $0.expiresAt = Date(timeIntervalSince1970: 1_800_000_001) }, { $0.expiresAt = nil },
            { $0.createdAt = Date(timeIntervalSince1970: 1) }, { $0.updatedAt = Date(timeIntervalSince1970: 2) },
            { $0.refreshedAt = nil }, { $0.endUser = nil }, { $0.endUser?.email = "c@d.example" },
            { $0.endUser?.name = "C" }, { $0.tags["team"] = "edge" }, { $0.tags = [:] }, { $0.settings = ["a": "b"] },
            { $0.metadata = #"{"k":1}"# }, { $0.idToken = nil }, { $0.extras = nil },
        ]
        // The same characters in another spelling (é as e and a combining accent): equal as Swift strings, other bytes.
        changes.append { $0.screenName = "Zo\u{EB} \u{7F}" }
        changes.append { $0.screenName = "Zoe\u{308} \u{7F}" }
        for change in changes {
            var changed = original
            change(&changed)
            #expect(Self.body(changed, cache) == AccountJSON.full(changed, status: "active"))
            // And back: the original's bytes again, not the changed account's.
            #expect(Self.body(original, cache) == AccountJSON.full(original, status: "active"))
        }
    }

    /// The kept opening fields of a token read's audit event are those of the account read: made again when the
    /// provider, the uid or the end user changes, and for another spelling of the same id.
    @Test func keptAuditFieldsNameTheAccountRead() {
        let cache = AccountRenderCache()
        func fields(_ opening: AuditTrail.Opening) -> String {
            String(decoding: opening.json, as: UTF8.self) + "|" + String(decoding: opening.text, as: UTF8.self)
        }
        func fresh(_ account: Account) -> String {
            fields(
                AuditTrail.Opening(.tokenRead, account: account.id, provider: account.provider, endUser: AuditEvent.endUser(of: account)))
        }
        let original = AccountJSONTests.rich
        var changes: [(inout Account) -> Void] = [
            { $0.endUser = nil }, { $0.endUser = EndUser(id: "user-8") }, { $0.uid = "u\"1\\3" }, { $0.provider = "acmf" },
        ]
        // The same characters in another spelling: the same id as Swift compares strings, other bytes.
        changes.append { $0.uid = "Zo\u{EB}" }
        changes.append { $0.uid = "Zoe\u{308}" }
        #expect(fields(cache.rendering(of: original, id: original.id).audit) == fresh(original))
        for change in changes {
            var changed = original
            change(&changed)
            #expect(fields(cache.rendering(of: changed, id: changed.id).audit) == fresh(changed))
            #expect(fields(cache.rendering(of: changed, id: changed.id).audit) == fresh(changed))
            #expect(fields(cache.rendering(of: original, id: original.id).audit) == fresh(original))
        }
        var first = original
        first.uid = "Zo\u{EB}"
        var second = original
        second.uid = "Zoe\u{308}"
        #expect(fields(cache.rendering(of: first, id: first.id).audit) == fresh(first))
        #expect(fields(cache.rendering(of: second, id: second.id).audit) == fresh(second))
        #expect(fields(cache.rendering(of: first, id: first.id).audit) == fresh(first))
    }

    @Test func itHoldsAtMostItsCapacity() {
        let cache = AccountRenderCache(capacity: 4)
        for n in 0..<10 {
            let account = Account(
                provider: "weibo", uid: String(n), accessToken: Secret("t\(n)"), createdAt: Date(timeIntervalSince1970: 0),
                updatedAt: Date(timeIntervalSince1970: 0))
            #expect(Self.body(account, cache) == AccountJSON.full(account, status: "active"))
            #expect(cache.count <= 4)
        }
    }
}
