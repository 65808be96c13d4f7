import BrokerCore
import BrokerFileStore
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

    /// The file store hands out its index's compact form, whose out-of-line fields are one object shared until a
    /// write (and with neighbours holding the same fields): a read of it renders the same bytes as from scratch, and
    /// a change to a field kept beside that object (dates, ids, the end user) renders again though the object is
    /// the same.
    @Test func heldAccountsSharingTheirFieldsObjectRenderAgainWhenAnotherFieldChanges() {
        let cache = AccountRenderCache()
        // Without tags: an object is shared only by accounts without tags or settings.
        var original = AccountJSONTests.rich
        original.tags = [:]
        let held = HeldAccount(compact: CompactAccount(original))
        func body(_ held: HeldAccount, _ id: String) -> String {
            String(
                decoding: AccountJSON.fullBytes(held, quotedStatus: #""active""#, parts: cache.rendering(of: held, id: id).parts),
                as: UTF8.self)
        }
        for _ in 0..<2 { #expect(body(held, original.id) == AccountJSON.full(original, status: "active")) }
        let changes: [(inout Account) -> Void] = [
            { $0.expiresAt = Date(timeIntervalSince1970: 1_800_000_001) }, { $0.expiresAt = nil },
            { $0.createdAt = Date(timeIntervalSince1970: 1) }, { $0.updatedAt = Date(timeIntervalSince1970: 2) },
            { $0.refreshedAt = nil }, { $0.endUser?.id = "user-8" }, { $0.accessToken = Secret("new-token") },
        ]
        for change in changes {
            var changed = original
            change(&changed)
            let again = HeldAccount(compact: CompactAccount(changed, reusing: held.compact.sharedFields))
            #expect(again.compact.sharedFields === held.compact.sharedFields)
            #expect(body(again, changed.id) == AccountJSON.full(changed, status: "active"))
            #expect(body(held, original.id) == AccountJSON.full(original, status: "active"))
        }
        // Another object with the same strings (a store that wraps an Account per read) is the same rendering.
        #expect(body(HeldAccount(original), original.id) == AccountJSON.full(original, status: "active"))
    }

    /// Thousands of ids, kept in one table: each read after the first finds its own account's parts (the entry of
    /// no other id), and the cache holds one entry per id.
    @Test func manyIdsAreEachKeptAndFound() {
        let cache = AccountRenderCache(capacity: 5_000)
        let accounts = (0..<3_000).map { n in
            Account(
                provider: n.isMultiple(of: 2) ? "weibo" : "acme", uid: String(n * 7919), accessToken: Secret("t\(n)"),
                screenName: "user \(n)", createdAt: Date(timeIntervalSince1970: Double(n)), updatedAt: Date(timeIntervalSince1970: 0))
        }
        for account in accounts + accounts {
            #expect(Self.body(account, cache) == AccountJSON.full(account, status: "active"))
        }
        #expect(cache.count == 3_000)
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

    /// With the file store, the whole answer is kept beside the account itself: the next reads of the account find
    /// the same answer, without the cache's table and without copying the account out, and a write of the account
    /// (of any rendered field or secret) makes it miss until the new version's answer is kept.
    @Test func theFileStoreKeepsAnAnswerBesideItsAccountUntilTheAccountIsWritten() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("render-memo-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try JSONFileAccountRepository(directory: directory, codec: PlainJSONAccountCodec())
        let cache = AccountRenderCache()
        var account = AccountJSONTests.rich
        account.tags = [:]
        try await store.put(account)
        /// A read as the inline path makes it: the answer kept beside the account, else a new one kept there.
        func read() throws -> (answer: AccountRenderCache.Answer, kept: Bool) {
            if let kept = cache.keptBeside(account.accountID, in: store) { return (kept, true) }
            let held = try #require(store.heldNow(id: account.accountID))
            return (cache.answer(for: held, id: account.accountID, keepingIn: store), false)
        }
        func body(_ answer: AccountRenderCache.Answer) -> String { String(decoding: answer.body, as: UTF8.self) }
        let first = try read()
        let second = try read()
        #expect(!first.kept && second.kept && first.answer === second.answer)
        #expect(body(second.answer) == AccountJSON.full(account, status: "active"))
        // Kept beside the account, not in the cache's own table.
        #expect(cache.count == 0)
        // Each write renders again: fields without secrets, the token, the token secret, the ID token and extras.
        let changes: [(inout Account) -> Void] = [
            { $0.scope = "read write" }, { $0.expiresAt = Date(timeIntervalSince1970: 1_900_000_000) },
            { $0.accessToken = Secret("rotated-token") }, { $0.tokenSecret = Secret("rotated-secret") },
            { $0.idToken = Secret("eyJ.rotated.id") }, { $0.extras = #"{"k":"rotated"}"# },
        ]
        var previous = first.answer
        for change in changes {
            change(&account)
            try await store.put(account)
            let fresh = try read()
            #expect(!fresh.kept && fresh.answer !== previous && body(fresh.answer) == AccountJSON.full(account, status: "active"))
            let next = try read()
            #expect(next.kept && next.answer === fresh.answer)
            previous = fresh.answer
        }
        // A removed account keeps nothing.
        _ = try await store.delete(id: account.accountID)
        #expect(cache.keptBeside(account.accountID, in: store) == nil)
    }
}
