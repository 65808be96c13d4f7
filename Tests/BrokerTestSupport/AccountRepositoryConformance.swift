import BrokerCore
import Foundation
import Testing

/// Opens a repository on one backing store; calling it again on the same store simulates a restart.
public typealias RepositoryOpener = @Sendable () throws -> any AccountRepository

/// The behaviour every ``AccountRepository`` must show, written once for the file store and the Redis store.
///
/// Each function gets an opener for a fresh, empty backing store.
public enum AccountRepositoryConformance {
    /// Put, get, list and delete behave like a map keyed by `provider:uid`.
    public static func putGetListDelete(_ open: RepositoryOpener) async throws {
        let repository = try open()
        let alice = Account.make(uid: "1")
        let bob = Account.make(uid: "2")
        #expect(try await repository.get(id: alice.accountID) == nil)
        try await repository.put(alice)
        try await repository.put(bob)
        #expect(try await repository.get(id: "github:1") == alice)
        #expect(try await repository.list(provider: nil) == [alice, bob])

        #expect(try await repository.delete(id: alice.accountID) == alice)
        #expect(try await repository.get(id: alice.accountID) == nil)
        #expect(try await repository.delete(id: alice.accountID) == nil)
        #expect(try await repository.list(provider: nil) == [bob])
        #expect(try await open().list(provider: nil) == [bob])
    }

    /// Authorizing the same user again replaces the one record, and `update` can keep `createdAt`.
    public static func reauthorizationUpdatesSameRecord(_ open: RepositoryOpener) async throws {
        let repository = try open()
        let first = Account.make(uid: "42", accessToken: "old-token", createdAt: .fixture)
        try await repository.put(first)

        let later = Date.fixture.addingTimeInterval(7200)
        let fresh = Account.make(uid: "42", accessToken: "new-token", scope: "repo user", createdAt: later)
        let stored = try await repository.update(id: fresh.accountID) { existing in
            var next = fresh
            next.createdAt = existing?.createdAt ?? fresh.createdAt
            return next
        }
        #expect(stored?.accessToken == Secret("new-token"))
        #expect(stored?.createdAt == Date.fixture)
        #expect(stored?.updatedAt == later)

        let all = try await open().list(provider: nil)
        #expect(all.count == 1)
        #expect(all.first == stored)
    }

    /// `list(provider:)` keeps only that provider's accounts, sorted by id.
    public static func listFiltersByProviderSortedByID(_ open: RepositoryOpener) async throws {
        let repository = try open()
        let accounts = [
            Account.make(provider: "spotify", uid: "b"),
            Account.make(provider: "github", uid: "zed"),
            Account.make(provider: "spotify", uid: "a"),
            Account.make(provider: "github", uid: "10"),
            Account.make(provider: "gitlab", uid: "1"),
        ]
        for account in accounts { try await repository.put(account) }

        let spotify = try await repository.list(provider: "spotify")
        #expect(spotify.map(\.id) == ["spotify:a", "spotify:b"])
        let all = try await repository.list(provider: nil)
        #expect(all.map(\.id) == ["github:10", "github:zed", "gitlab:1", "spotify:a", "spotify:b"])
        #expect(try await repository.list(provider: "unknown").isEmpty)
    }

    /// Fifty concurrent read-modify-writes of one id all count: none is lost.
    public static func concurrentUpdatesAreNotLost(_ open: RepositoryOpener) async throws {
        let repository = try open()
        let id = Account.make(uid: "counter").accountID
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    _ = try await repository.update(id: id) { current in
                        var account = current ?? Account.make(uid: "counter", scope: "0")
                        account.scope = String(Int(account.scope ?? "0")! + 1)
                        return account
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await repository.get(id: id)?.scope == "50")
        #expect(try await open().get(id: id)?.scope == "50")
    }

    /// Two hundred concurrent puts of different ids are all there after a restart.
    public static func concurrentPutsSurviveRestart(_ open: RepositoryOpener) async throws {
        let repository = try open()
        let accounts = (0..<200).map { Account.make(provider: $0.isMultiple(of: 2) ? "github" : "google", uid: "user-\($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for account in accounts {
                group.addTask { try await repository.put(account) }
            }
            try await group.waitForAll()
        }
        let reopened = try await open().list(provider: nil)
        #expect(reopened == accounts.sortedByID())
    }

    /// A restart shows every field exactly as it was read before the restart.
    public static func restartPreservesEveryField(_ open: RepositoryOpener) async throws {
        let repository = try open()
        let full = Account.makeFull()
        try await repository.put(full)
        let before = try #require(try await repository.get(id: full.accountID))
        let after = try #require(try await open().get(id: full.accountID))
        #expect(after == before)
        #expect(after.status == .reauthorizationRequired)
        #expect(after.refreshToken == Secret("refresh-SENTINEL-2"))
        #expect(after.tokenSecret == Secret("secret-SENTINEL-3"))
        #expect(after.screenName == "Twitter API")
        for (stored, original) in [(after.createdAt, full.createdAt), (after.updatedAt, full.updatedAt)] {
            #expect(abs(stored.timeIntervalSince(original)) < 0.001)
        }
        #expect(abs(after.expiresAt!.timeIntervalSince(full.expiresAt!)) < 0.001)
        #expect(abs(after.refreshedAt!.timeIntervalSince(full.refreshedAt!)) < 0.001)
        #expect(abs(after.issuedAt!.timeIntervalSince(full.issuedAt!)) < 0.001)
        #expect(abs(after.refreshTokenExpiresAt!.timeIntervalSince(full.refreshTokenExpiresAt!)) < 0.001)
        #expect(after.idToken == Secret("id-token-SENTINEL-4"))
        #expect(after.extras == full.extras)
        #expect(after.endUser == EndUser(id: "end-user-42", email: "ada@example.com", name: "Ada Lovelace"))
        #expect(after.tags == ["plan": "pro", "team": "T-1"])
    }

    /// An entered credential (several fields, quotes, non-ASCII, a colon) is stored in `access_token` and reads back
    /// whole after a restart, fields and all.
    public static func enteredCredentialSurvivesRestart(_ open: RepositoryOpener) async throws {
        let values = CredentialValues([("username", Secret("ada")), ("password", Secret("p:\"w\" é SENTINEL"))])
        let account = Account(
            provider: "basicp", uid: "ada", accessToken: values.stored, tokenType: "basic",
            createdAt: Date(timeIntervalSince1970: 1_700_000_000), updatedAt: Date(timeIntervalSince1970: 1_700_000_001),
            endUser: EndUser(id: "end-user-42"), tags: ["plan": "pro"])
        try await open().put(account)
        let after = try #require(try await open().get(id: account.accountID))
        #expect(CredentialValues(stored: after.accessToken) == values)
        #expect(after.tokenType == "basic" && after.refreshToken == nil && after.expiresAt == nil)
        #expect(after.tags == ["plan": "pro"])
    }

    /// `page` keeps what every filter asks (provider, end user, all tags, a further test), in id order, page by page.
    public static func pageFiltersAndPages(_ open: RepositoryOpener) async throws {
        let repository = try open()
        func make(_ provider: String, _ uid: String, _ user: String?, _ tags: [String: String] = [:]) -> Account {
            var account = Account.make(provider: provider, uid: uid)
            account.endUser = user.map { EndUser(id: $0) }
            account.tags = tags
            return account
        }
        let accounts = [
            make("github", "1", "u42", ["plan": "pro", "env": "prod"]), make("github", "2", "u42", ["plan": "free"]),
            make("google", "1", "u42", ["plan": "pro"]), make("github", "3", "u7", ["plan": "pro", "env": "prod"]),
            make("github", "4", nil), make("spotify", "9", "u420"),
        ]
        for account in accounts { try await repository.put(account) }
        func ids(_ filter: AccountFilter, limit: Int = 100) async throws -> [String] {
            try await repository.page(after: nil, limit: limit, filter: filter).accounts.map(\.id)
        }
        #expect(try await ids(AccountFilter()) == accounts.sortedByID().map(\.id))
        #expect(try await ids(AccountFilter(provider: "github")) == ["github:1", "github:2", "github:3", "github:4"])
        #expect(try await ids(AccountFilter(endUserID: "u42")) == ["github:1", "github:2", "google:1"])
        #expect(try await ids(AccountFilter(endUserID: "u4")).isEmpty)
        #expect(try await ids(AccountFilter(provider: "github", endUserID: "u42")) == ["github:1", "github:2"])
        #expect(try await ids(AccountFilter(tags: ["plan": "pro"])) == ["github:1", "github:3", "google:1"])
        #expect(try await ids(AccountFilter(tags: ["plan": "pro", "env": "prod"])) == ["github:1", "github:3"])
        #expect(try await ids(AccountFilter(tags: ["plan": "Pro"])).isEmpty)
        #expect(try await ids(AccountFilter(also: { $0.uid == "1" })) == ["github:1", "google:1"])
        #expect(try await ids(AccountFilter(endUserID: "u42", tags: ["plan": "pro"], also: { $0.provider == "google" })) == ["google:1"])

        // Pages of two: every account once, in order; the last page says there is no next.
        var seen: [String] = []
        var after: AccountID?
        var pages = 0
        repeat {
            let page = try await repository.page(after: after, limit: 2, filter: AccountFilter())
            seen += page.accounts.map(\.id)
            #expect(page.accounts.count <= 2)
            after = page.nextAfter
            pages += 1
        } while after != nil && pages < 10
        #expect(seen == accounts.sortedByID().map(\.id))
        #expect(pages == 3)
        // A full last page has no next either, and the filters apply across pages.
        let first = try await repository.page(after: nil, limit: 2, filter: AccountFilter(endUserID: "u42"))
        #expect(first.accounts.map(\.id) == ["github:1", "github:2"] && first.nextAfter == "github:2")
        let second = try await repository.page(after: first.nextAfter, limit: 2, filter: AccountFilter(endUserID: "u42"))
        #expect(second.accounts.map(\.id) == ["google:1"] && second.nextAfter == nil)
        let exact = try await repository.page(after: nil, limit: 3, filter: AccountFilter(endUserID: "u42"))
        #expect(exact.accounts.count == 3 && exact.nextAfter == nil)
        // Moving an account to another end user moves it between the filters, after a restart too.
        _ = try await repository.update(id: "github:2") { current in
            var account = current
            account?.endUser = EndUser(id: "u7")
            return account
        }
        #expect(try await ids(AccountFilter(endUserID: "u42")) == ["github:1", "google:1"])
        let reopened = try open()
        #expect(
            try await reopened.page(after: nil, limit: 10, filter: AccountFilter(endUserID: "u7")).accounts.map(\.id) == [
                "github:2", "github:3",
            ])
        _ = try await repository.delete(id: "github:3")
        #expect(try await ids(AccountFilter(endUserID: "u7")) == ["github:2"])
    }

    /// Paging under concurrent inserts: no account skipped or repeated; every account there throughout is listed once.
    public static func pagingUnderConcurrentInserts(_ open: RepositoryOpener) async throws {
        let repository = try open()
        let present = (0..<60).map { index in
            var account = Account.make(provider: "github", uid: String(format: "user-%03d", index * 2))
            account.endUser = EndUser(id: "owner")
            return account
        }
        for account in present { try await repository.put(account) }
        // Inserted while paging: ids that sort between, before and after the ones present, some of the same end user.
        let added = (0..<60).map { index in
            var account = Account.make(provider: "github", uid: String(format: "user-%03d", index * 2 + 1))
            account.endUser = index.isMultiple(of: 2) ? EndUser(id: "owner") : nil
            return account
        }
        for filter in [AccountFilter(), AccountFilter(endUserID: "owner")] {
            let inserting = Task {
                for account in added { try await repository.put(account) }
            }
            var seen: [String] = []
            var after: AccountID?
            var pages = 0
            repeat {
                let page = try await repository.page(after: after, limit: 7, filter: filter)
                seen += page.accounts.map(\.id)
                after = page.nextAfter
                pages += 1
                await Task.yield()
            } while after != nil && pages < 100
            try await inserting.value
            #expect(Set(seen).count == seen.count, "an account was listed twice")
            #expect(seen == seen.sorted { ExactKey.precedes($0, $1) })
            for account in present { #expect(seen.contains(account.id), "\(account.id) was skipped") }
            for id in seen {
                let typed = try #require(AccountID(id))
                #expect(filter.matches(try #require(try await repository.get(id: typed))))
            }
            for account in added { _ = try await repository.delete(id: account.accountID) }
        }
    }

    /// `update` returning nil deletes; a throwing transform changes nothing and its error comes back as thrown; a missing id passes nil.
    public static func updateEdgeCases(_ open: RepositoryOpener) async throws {
        let refused = StoreError.unavailable("refused by the transform")
        let repository = try open()
        let account = Account.make(uid: "7")
        let created = try await repository.update(id: account.accountID) { current in
            #expect(current == nil)
            return nil
        }
        #expect(created == nil)
        #expect(try await repository.list(provider: nil).isEmpty)

        try await repository.put(account)
        await #expect(throws: refused) {
            _ = try await repository.update(id: account.accountID) { _ throws(StoreError) in throw refused }
        }
        #expect(try await repository.get(id: account.accountID) == account)

        #expect(try await repository.update(id: account.accountID) { _ in nil } == nil)
        #expect(try await repository.get(id: account.accountID) == nil)
        #expect(try await open().get(id: account.accountID) == nil)
    }

    /// Ids that Swift calls equal but whose bytes differ (`café` composed and decomposed, `K` and U+212A
    /// KELVIN SIGN) are separate accounts: each reads its own token, deleting one leaves the other, and a
    /// restart brings back neither the deleted one nor a merged one.
    public static func canonicallyEquivalentIDsAreDistinct(_ open: RepositoryOpener) async throws {
        let repository = try open()
        let composed = Account.make(uid: "caf\u{E9}", accessToken: "token-of-composed")
        let decomposed = Account.make(uid: "cafe\u{301}", accessToken: "token-of-decomposed")
        let ascii = Account.make(uid: "Kay", accessToken: "token-of-ascii")
        let kelvin = Account.make(uid: "\u{212A}ay", accessToken: "token-of-kelvin")
        #expect(composed.id == decomposed.id)  // what Swift's String says, and why this suite exists
        for account in [composed, decomposed, ascii, kelvin] { try await repository.put(account) }
        #expect(try await repository.get(id: composed.accountID)?.accessToken == Secret("token-of-composed"))
        #expect(try await repository.get(id: decomposed.accountID)?.accessToken == Secret("token-of-decomposed"))
        #expect(try await repository.get(id: kelvin.accountID)?.accessToken == Secret("token-of-kelvin"))
        #expect(try await repository.list(provider: nil).count == 4)

        #expect(try await repository.delete(id: decomposed.accountID)?.accessToken == Secret("token-of-decomposed"))
        #expect(try await repository.get(id: decomposed.accountID) == nil)
        #expect(try await repository.get(id: composed.accountID)?.accessToken == Secret("token-of-composed"))
        let updated = try await repository.update(id: ascii.accountID) { existing in
            var next = existing
            next?.scope = "changed"
            return next
        }
        #expect(updated?.uid.utf8.elementsEqual("Kay".utf8) == true)
        #expect(try await repository.get(id: kelvin.accountID)?.scope == "repo")

        let reopened = try open()
        let ids = try await reopened.list(provider: nil).map { Array($0.uid.utf8) }
        #expect(ids.count == 3)
        #expect(!ids.contains(Array("cafe\u{301}".utf8)))
        #expect(try await reopened.get(id: decomposed.accountID) == nil)
        #expect(try await reopened.get(id: composed.accountID)?.accessToken == Secret("token-of-composed"))
    }

    /// Every uid a provider may send (up to 128 bytes of UTF-8: `/`, `@`, accented letters, CJK) can be stored, read back and
    /// deleted, across a restart, even where its escaped form would not fit a file name.
    public static func longestUIDsAreStorable(_ open: RepositoryOpener) async throws {
        let repository = try open()
        let uids = [
            String(repeating: "/", count: 128), String(repeating: "@", count: 128),
            String(repeating: "\u{E9}", count: 64), String(repeating: "\u{6F22}", count: 42), String(repeating: "a", count: 128),
        ]
        for uid in uids {
            try await repository.put(Account.make(uid: uid, accessToken: "token-\(uid.utf8.count)-\(uid.unicodeScalars.first!.value)"))
        }
        let reopened = try open()
        for uid in uids {
            let account = try #require(try await reopened.get(id: AccountID(provider: "github", uid: uid)))
            #expect(account.uid.utf8.elementsEqual(uid.utf8))
            #expect(account.accessToken == Secret("token-\(uid.utf8.count)-\(uid.unicodeScalars.first!.value)"))
        }
        #expect(try await reopened.list(provider: "github").count == uids.count)
        #expect(try await reopened.delete(id: AccountID(provider: "github", uid: uids[0])) != nil)
        #expect(try await open().list(provider: nil).count == uids.count - 1)
    }

    /// Status counts follow every write and delete, and survive a restart: reauthorization, expiry without a
    /// refresh token, a refresh token keeping a past-expiry account active, and an account given up on (`refresh_exhausted`).
    public static func statusCountsFollowWrites(_ open: RepositoryOpener) async throws {
        let repository = try open()
        let counter = try #require(repository.statusCounting, "the repository cannot count accounts by status")
        #expect(try await counter.statusCounts(at: .fixture) == AccountStatusCounts())
        let lasting = Account.make(uid: "1")
        var expiring = Account.make(uid: "2")
        expiring.expiresAt = Date.fixture.addingTimeInterval(60)
        var refreshable = Account.make(uid: "3")
        refreshable.expiresAt = Date.fixture.addingTimeInterval(-60)
        refreshable.refreshToken = Secret("refresh-3")
        var dead = Account.make(uid: "4")
        dead.expiresAt = Date.fixture.addingTimeInterval(-60)
        dead.status = .reauthorizationRequired
        for account in [lasting, expiring, refreshable, dead] { try await repository.put(account) }
        #expect(try await counter.statusCounts(at: .fixture) == AccountStatusCounts(active: 3, expired: 0, reauthorizationRequired: 1))
        let later = Date.fixture.addingTimeInterval(60)
        #expect(try await counter.statusCounts(at: later) == AccountStatusCounts(active: 2, expired: 1, reauthorizationRequired: 1))

        // Authorized again: active, with an expiry an hour on.
        _ = try await repository.update(id: dead.accountID) { current in
            var next = current
            next?.status = .active
            next?.expiresAt = Date.fixture.addingTimeInterval(3600)
            return next
        }
        #expect(try await counter.statusCounts(at: later) == AccountStatusCounts(active: 3, expired: 1, reauthorizationRequired: 0))
        // Refreshed: a refresh token keeps it active past its expiry.
        _ = try await repository.update(id: expiring.accountID) { current in
            var next = current
            next?.refreshToken = Secret("refresh-2")
            return next
        }
        #expect(try await counter.statusCounts(at: later) == AccountStatusCounts(active: 4, expired: 0, reauthorizationRequired: 0))
        _ = try await repository.delete(id: lasting.accountID)
        _ = try await repository.update(id: refreshable.accountID) { _ in nil }
        var revoked = Account.make(uid: "5")
        revoked.status = .reauthorizationRequired
        try await repository.put(revoked)
        #expect(try await counter.statusCounts(at: later) == AccountStatusCounts(active: 2, expired: 0, reauthorizationRequired: 1))
        let reopened = try #require(try open().statusCounting)
        #expect(try await reopened.statusCounts(at: later) == AccountStatusCounts(active: 2, expired: 0, reauthorizationRequired: 1))

        // Given up on: its own status, kept across a restart, counted apart; a sign-in makes it active again.
        var exhausted = Account.make(uid: "6")
        exhausted.refreshToken = Secret("refresh-6")
        exhausted.expiresAt = Date.fixture.addingTimeInterval(-60)
        exhausted.status = .refreshExhausted
        try await repository.put(exhausted)
        #expect(
            try await counter.statusCounts(at: later)
                == AccountStatusCounts(active: 2, expired: 0, reauthorizationRequired: 1, refreshExhausted: 1))
        let restarted = try open()
        #expect(try await restarted.get(id: exhausted.accountID)?.status == .refreshExhausted)
        #expect(
            try await #require(restarted.statusCounting).statusCounts(at: later)
                == AccountStatusCounts(active: 2, expired: 0, reauthorizationRequired: 1, refreshExhausted: 1))
        _ = try await restarted.update(id: exhausted.accountID) { current in
            var next = current
            next?.status = .active
            return next
        }
        #expect(try await open().get(id: exhausted.accountID)?.status == .active)
        #expect(
            try await #require(try open().statusCounting).statusCounts(at: later)
                == AccountStatusCounts(active: 3, expired: 0, reauthorizationRequired: 1, refreshExhausted: 0))
    }

    /// ``ImmediateAccountReading/heldNow(id:)`` is the account ``ImmediateAccountReading/getNow(id:)`` hands out,
    /// field for field, in its lighter form, also after a write; nil for an absent account. A repository that reads
    /// nothing from memory offers neither (nothing to check). A cache fills on a read, so each check reads first
    /// and waits until memory holds the account.
    public static func heldNowIsTheAccountGetNowHandsOut(_ open: RepositoryOpener) async throws {
        let repository = try open()
        guard let reader = repository.immediateReading else { return }
        var bare = Account.make(uid: "held-1", accessToken: "first")
        bare.tokenType = nil
        bare.scope = nil
        var withSettings = Account.make(uid: "held-2")
        withSettings.settings = ["subdomain": "acme"]
        withSettings.metadata = #"{"plan":"pro"}"#
        let accounts = [Account.makeFull(), bare, withSettings]
        for account in accounts { try await repository.put(account) }
        /// The account as memory holds it once a read has filled it (a cache fills asynchronously).
        func held(_ id: AccountID, where condition: (Account) -> Bool = { _ in true }) async throws -> (Account, HeldAccount) {
            for _ in 0..<5_000 {
                _ = try await repository.get(id: id)
                if let now = reader.getNow(id: id), condition(now), let held = reader.heldNow(id: id) { return (now, held) }
                try await Task.sleep(nanoseconds: 1_000_000)
            }
            throw StoreError.unavailable("account \(id.string) never held in memory")
        }
        for account in accounts {
            let (now, held) = try await held(account.accountID)
            #expect(now == (try await repository.get(id: account.accountID)))
            #expect(held.account == now)
            #expect(held.provider == now.provider && held.uid == now.uid)
            #expect(held.accessToken == now.accessToken && held.tokenSecret == now.tokenSecret)
            #expect(held.idToken == now.idToken && held.extras == now.extras)
            #expect(held.status == now.status && held.expiresAt == now.expiresAt)
            #expect(held.refreshTokenExpiresAt == now.refreshTokenExpiresAt && held.endUserID == now.endUser?.id)
            #expect(held.isExpired(at: .fixture) == now.isExpired(at: .fixture))
        }
        #expect(reader.heldNow(id: "github:held-absent") == nil)

        // A write: the next read from memory holds the new token, whole and in the lighter form.
        var rewritten = bare
        rewritten.accessToken = Secret("second")
        rewritten.expiresAt = Date.fixture.addingTimeInterval(-1)
        try await repository.put(rewritten)
        let (now, after) = try await held(bare.accountID) { $0.accessToken == Secret("second") }
        #expect(after.account == now && now == rewritten)
        #expect(after.accessToken == Secret("second") && after.isExpired(at: .fixture))
        _ = try await repository.delete(id: bare.accountID)
        #expect(reader.heldNow(id: bare.accountID) == nil)
    }
}
