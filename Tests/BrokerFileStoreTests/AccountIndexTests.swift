import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerCore
@testable import BrokerFileStore

extension IndexedAccount {
    /// The account with its secrets opened; the index alone (no snapshot read) keeps them in memory.
    fileprivate func opened(path: String) throws -> Account {
        switch sealed {
        case nil: return account
        case .secrets(let secrets)?: return try secrets.open(into: account, path: path)
        case .snapshot?: throw StoreTestError("secrets left in a snapshot the test never wrote")
        }
    }
}

/// The file store's memory keeps every account findable by id, sealed or open, through removals, rewrites and openings.
struct AccountIndexTests {
    @Test func removalsRewritesAndOpeningsKeepEveryOtherEntryAsItWas() throws {
        let codec = try EncryptedRecordFixtures.codec(EncryptedRecordFixtures.keyText())
        func sealed(_ account: Account) throws -> StoredAccount {
            try codec.storedAccount(try codec.encode(account), path: "test")
        }
        let accounts = (1...6).map { Account.make(uid: "\($0)") }
        var index = AccountIndex(capacity: 4)
        for (position, account) in accounts.enumerated() {
            // github:1, 3 and 5 open, github:2, 4 and 6 sealed.
            let (readable, secrets) = (position.isMultiple(of: 2) ? StoredAccount(account) : try sealed(account)).parts()
            index.insertNew(readable, sealed: secrets, key: ExactKey(account.id))
        }
        #expect(Set(index.sealedIDs) == ["github:2", "github:4", "github:6"])

        // A sealed account in the middle, then an open one at the start.
        index.remove("github:2")
        index.remove("github:1")
        #expect(index["github:1"] == nil && index["github:2"] == nil)
        #expect(Set(index.sealedIDs) == ["github:4", "github:6"])
        #expect(try index.firstSealed(with: codec.keyring.current.id) { _ in [] } == "github:4")
        #expect(try index["github:6"]?.opened(path: "test") == accounts[5])
        #expect(index["github:3"]?.sealed == nil && index["github:3"]?.account == accounts[2])
        #expect(Set(index.entries(provider: nil).map(\.id)) == ["github:3", "github:4", "github:5", "github:6"])
        #expect(index.entries(provider: "google").isEmpty)

        // An opening read before a rewrite loses to it; a current one opens the entry.
        let stale = try #require(index["github:4"]?.sealed)
        let rotated = Account.make(uid: "4", accessToken: "rotated-token")
        index.set(try sealed(rotated), for: "github:4")
        index.replace(stale, by: accounts[3], id: "github:4")
        #expect(try index["github:4"]?.opened(path: "test") == rotated)
        for id in ["github:4", "github:6"] {
            let entry = try #require(index[id])
            index.replace(try #require(entry.sealed), by: try entry.opened(path: "test"), id: id)
        }
        #expect(index.sealedIDs.isEmpty)
        #expect(index["github:4"]?.sealed == nil && index["github:4"]?.account == rotated)

        // Sealed again after everything was open, then removed; an open rewrite replaces a sealed entry.
        index.set(try sealed(.make(uid: "7")), for: "github:7")
        index.set(try sealed(.make(uid: "8")), for: "github:8")
        #expect(Set(index.sealedIDs) == ["github:7", "github:8"])
        index.remove("github:7")
        index.set(StoredAccount(.make(uid: "8", accessToken: "plain")), for: "github:8")
        #expect(index.sealedIDs.isEmpty)
        #expect(index["github:8"]?.account == .make(uid: "8", accessToken: "plain"))
        #expect(Set(index.entries(provider: "github").map(\.id)) == ["github:3", "github:4", "github:5", "github:6", "github:8"])
    }

    /// A memo kept beside an account (the rendering `GET /account` keeps) comes back with the account until the
    /// account is written or removed, and no more than the index's memo capacity are kept: the oldest goes first.
    @Test func memosComeBackWithTheirAccountUntilAWriteAndAreBounded() {
        final class Memo: Sendable {
            let number: Int
            init(_ number: Int) { self.number = number }
        }
        var index = AccountIndex(capacity: 8, memoCapacity: 3)
        for uid in 1...5 { index.set(StoredAccount(.make(uid: "\(uid)")), for: "github:\(uid)") }
        func memos() -> [Int?] { (1...5).map { (index.openHeld("github:\($0)")?.memo as? Memo)?.number } }
        for uid in 1...3 { index.keepMemo(Memo(uid), for: "github:\(uid)") }
        #expect(memos() == [1, 2, 3, nil, nil])
        // A fourth: the one kept first goes.
        index.keepMemo(Memo(4), for: "github:4")
        #expect(memos() == [nil, 2, 3, 4, nil])
        // A write stores the account without its memo; a removal takes it away with the account.
        index.set(StoredAccount(.make(uid: "2", accessToken: "rotated")), for: "github:2")
        index.remove("github:3")
        #expect(memos() == [nil, nil, nil, 4, nil])
        #expect(index.openHeld("github:2")?.accessToken.value == "rotated")
        // None for an account the index does not hold.
        index.keepMemo(Memo(9), for: "github:9")
        #expect(index.openHeld("github:9") == nil)
        #expect(memos() == [nil, nil, nil, 4, nil])
    }

    /// A snapshot's accounts, appended in id order as start-up reads them, are found by binary search; removals leave
    /// their slots vacant until the same id comes back, and accounts added later are found beside them.
    /// With the exact-id table (``SortedIDTable``) built after loading, or the binary search alone.
    @Test(arguments: [false, true])
    func snapshotAccountsAreFoundInOrderThroughRemovalsAndReturns(idTable: Bool) throws {
        // Byte order: "github:10" sorts before "github:2"; ids of one end user interleave with those of another.
        let uids = (1...40).map(String.init).sorted { ("github:" + $0).utf8.lexicographicallyPrecedes(("github:" + $1).utf8) }
        var index = AccountIndex(capacity: uids.count)
        for uid in uids {
            var account = Account.make(uid: uid)
            account.endUser = EndUser(id: Int(uid)!.isMultiple(of: 2) ? "even" : "odd")
            index.appendSorted(CompactAccount(account), sealed: nil, key: ExactKey(account.id))
        }
        index.finishSorted()
        if idTable {
            let built = index.buildIDTable()
            #expect(built)
        }
        // A read (openHeld, which checks the table's candidate against the account itself) finds what a look-up finds.
        func readsAgree(_ line: Int = #line) {
            for id in uids.map({ "github:" + $0 }) + ["github:", "github:0", "github:100", "github:9x", "gitlab:1", ":", "a"] {
                #expect(index.openHeld(id)?.account == index[id]?.account, "\(id) at line \(line)")
            }
        }
        readsAgree()
        #expect(index.count == 40)
        for uid in uids { #expect(index["github:" + uid]?.account.uid == uid) }
        // Before the first id, between two, after the last, a prefix of one, another provider.
        for absent in ["github:", "github:0", "github:100", "github:9x", "github:1 ", "gitlab:1", "a", "zzz"] {
            #expect(index[absent] == nil, "\(absent)")
        }

        // Removed from the sorted slots: gone for reads, pages, lists and counts.
        index.remove("github:1")
        index.remove("github:25")
        index.remove("github:9")
        #expect(index["github:1"] == nil && index["github:25"] == nil && index["github:9"] == nil)
        readsAgree()
        #expect(index.count == 37)
        #expect(index.entries(provider: "github").count == 37)
        #expect(!index.entries(provider: nil).contains { $0.id == "github:25" })
        #expect(index.statusCounts(at: .fixture).active == 37)
        let firstPage = index.candidates(after: nil, provider: nil, endUser: nil, limit: 3).map(\.id)
        #expect(firstPage == ["github:10", "github:11", "github:12"])
        #expect(index.candidates(after: "github:24", provider: "github", endUser: nil, limit: 2).map(\.id) == ["github:26", "github:27"])
        #expect(index.candidates(after: nil, provider: nil, endUser: "odd", limit: 3).map(\.id) == ["github:11", "github:13", "github:15"])

        // The same id stored again takes its slot back; a new id goes after the sorted ones; both are found and listed.
        index.set(StoredAccount(.make(uid: "25", accessToken: "back")), for: "github:25")
        index.set(StoredAccount(.make(uid: "100", accessToken: "new")), for: "github:100")
        index.set(StoredAccount(.make(uid: "0", accessToken: "first")), for: "github:0")
        #expect(index["github:25"]?.account.accessToken.value == "back")
        #expect(index["github:100"]?.account.accessToken.value == "new")
        #expect(index["github:0"]?.account.accessToken.value == "first")
        readsAgree()
        #expect(index.count == 40)
        #expect(
            index.candidates(after: nil, provider: nil, endUser: nil, limit: 4).map(\.id) == [
                "github:0", "github:10", "github:100", "github:11",
            ])
        // The end user's list follows: "github:25" came back without one.
        #expect(!index.candidates(after: "github:23", provider: nil, endUser: "odd", limit: 2).map(\.id).contains("github:25"))

        // Later accounts removed (the last fills the gap) and rewritten; sorted ones rewritten in place.
        index.remove("github:0")
        #expect(index["github:0"] == nil && index["github:100"]?.account.accessToken.value == "new")
        index.set(StoredAccount(.make(uid: "2", accessToken: "rewritten")), for: "github:2")
        #expect(index["github:2"]?.account.accessToken.value == "rewritten")
        readsAgree()
        #expect(index.count == 39)
        #expect(
            Set(index.entries(provider: nil).map(\.id))
                == Set(uids.map { "github:" + $0 } + ["github:100"]).subtracting(["github:1", "github:9"]))
    }

    /// The binary search compares ids' first 16 bytes as integers and only equal ones in full: ids shorter than,
    /// as long as and longer than that, sharing those bytes or not, non-ASCII, are all found, and near misses are not.
    /// With the exact-id table (``SortedIDTable``) built after loading, or the binary search alone.
    @Test(arguments: [false, true])
    func snapshotIdsAreFoundAroundTheirFirstSixteenBytes(idTable: Bool) throws {
        let uids = [
            "1", "12345678", "123456789", "1234567890", "12345678901234567890", "12345678901234567891",
            "1234567890123456789", "123456789012345678901", "123456789a", "1234567899", "é", "éé", "z", "\u{10FFFF}x",
        ]
        let ids = uids.map { "github:" + $0 }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var index = AccountIndex(capacity: ids.count)
        for id in ids {
            index.appendSorted(CompactAccount(.make(uid: String(id.dropFirst(7)))), sealed: nil, key: ExactKey(id))
        }
        index.finishSorted()
        if idTable {
            let built = index.buildIDTable()
            #expect(built)
        }
        for id in ids { #expect(index[id]?.account.id == id, "\(id)") }
        for absent in [
            "github:", "github:0", "github:123456789012345678", "github:1234567890123456789012", "github:12345678901234567892",
            "github:1234567", "github:e\u{301}", "github:ée", "github:{", "github", "github:\u{10FFFF}",
        ] {
            #expect(index[absent] == nil, "\(absent)")
        }
    }

    /// The index keeps accounts compacted; each comes back field for field, and byte for byte where Swift's `==` on
    /// strings would not tell (neighbours share their out-of-line fields only when the bytes are the same).
    @Test func accountsComeBackFieldForFieldAndByteForByte() throws {
        let full = Account.makeFull()
        // Every optional absent but the end user's id; a present date at 0 s since 2001 and one absent stay so.
        var bare = Account(
            provider: "github", uid: "2", accessToken: Secret("t"), createdAt: Date(timeIntervalSinceReferenceDate: 0),
            updatedAt: .fixture, refreshedAt: Date(timeIntervalSinceReferenceDate: 0))
        bare.endUser = EndUser(id: "end-user-7")
        // Canonically equivalent to the account before it (é composed there, e + U+0301 here), but other bytes.
        var composed = Account.make(uid: "3", scope: "caf\u{E9}")
        composed.endUser = EndUser(id: "u", email: "z\u{F6}e@example.com", name: "Zo\u{EB}")
        var decomposed = Account.make(uid: "4", scope: "cafe\u{301}")
        decomposed.endUser = EndUser(id: "u", email: "zo\u{308}e@example.com", name: "Zoe\u{308}")
        var same = Account.make(uid: "5", scope: "cafe\u{301}")
        same.endUser = EndUser(id: "u", email: "zo\u{308}e@example.com", name: "Zoe\u{308}")
        var index = AccountIndex()
        for account in [full, bare, composed, decomposed, same] {
            index.insertNew(account, sealed: nil, key: ExactKey(account.id))
        }
        #expect(index[full.id]?.account == full)
        let readBare = try #require(index[bare.id]?.account)
        #expect(readBare == bare)
        #expect(readBare.expiresAt == nil && readBare.issuedAt == nil && readBare.scope == nil && readBare.tags.isEmpty)
        #expect(readBare.refreshedAt == Date(timeIntervalSinceReferenceDate: 0) && readBare.endUser == EndUser(id: "end-user-7"))
        for account in [composed, decomposed, same] {
            let read = try #require(index[account.id]?.account)
            #expect(read == account)
            #expect(Array(read.scope!.utf8) == Array(account.scope!.utf8))
            #expect(Array(read.endUser!.email!.utf8) == Array(account.endUser!.email!.utf8))
            #expect(Array(read.endUser!.name!.utf8) == Array(account.endUser!.name!.utf8))
        }
    }

    /// The end users' lists of a snapshot's accounts, built after the last one in runs of slots on several threads
    /// (`finishSorted`), hold every account of each end user once, in id order, whatever the number of runs; and
    /// changes after that keep them so.
    @Test func endUsersListsOfASnapshotAreTheSameBuiltInOneRunOrInSeveral() throws {
        // Byte order of ids, as a snapshot holds them; every seventh account has no end user, the others cycle over
        // 997 end users so each list spans every run.
        let ids = (0..<20_000).map { "github:\($0)" }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        func owner(_ id: String) -> String? {
            let number = Int(id.dropFirst(7))!
            return number.isMultiple(of: 7) ? nil : "user-\(number % 997)"
        }
        var expected: [String: [String]] = [:]
        for id in ids { if let owner = owner(id) { expected[owner, default: []].append(id) } }
        var indexes: [AccountIndex] = []
        for threads in [1, 2, 4] {
            var index = AccountIndex(capacity: ids.count)
            for id in ids {
                var account = Account.make(uid: String(id.dropFirst(7)))
                account.endUser = owner(id).map { EndUser(id: $0) }
                index.appendSorted(CompactAccount(account), sealed: nil, key: ExactKey(id))
            }
            index.finishSorted(threads: threads)
            for (owner, list) in expected {
                #expect(
                    index.candidates(after: nil, provider: nil, endUser: owner, limit: 100).map(\.id) == list,
                    "\(owner), \(threads) threads")
            }
            #expect(index.candidates(after: nil, provider: nil, endUser: "user-997", limit: 100).isEmpty)
            indexes.append(index)
        }

        // Moved to another end user, removed, and a new account: the lists follow.
        var index = indexes[2]
        var moved = Account.make(uid: "1")
        moved.endUser = EndUser(id: "user-5")
        index.set(StoredAccount(moved), for: "github:1")
        index.remove("github:2")
        var added = Account.make(uid: "20000")
        added.endUser = EndUser(id: "user-1")
        index.set(StoredAccount(added), for: "github:20000")
        let user1 = index.candidates(after: nil, provider: nil, endUser: "user-1", limit: 100).map(\.id)
        #expect(
            user1
                == (expected["user-1"]!.filter { $0 != "github:1" } + ["github:20000"]).sorted {
                    $0.utf8.lexicographicallyPrecedes($1.utf8)
                })
        #expect(index.candidates(after: nil, provider: nil, endUser: "user-5", limit: 100).map(\.id).contains("github:1"))
        #expect(!index.candidates(after: nil, provider: nil, endUser: "user-2", limit: 100).map(\.id).contains("github:2"))
    }

    /// Faulting in an array's reserved memory from other threads, part by part in any order and while the owner
    /// appends, never changes what the array holds (start-up's decoding threads do this to the index's arrays).
    @Test func faultingInReservedMemoryLeavesTheArrayAsItIs() async throws {
        var values: [Int] = []
        values.reserveCapacity(600_000)
        values.append(contentsOf: 0..<1_000)
        let memory = try #require(ReservedMemory.unwritten(&values))
        #expect(memory.length == (values.capacity - 1_000) * MemoryLayout<Int>.stride)
        let parts = 37
        await withTaskGroup(of: Void.self) { group in
            for part in (0..<parts).reversed() { group.addTask { memory.populate(part: part, of: parts) } }
            // Appends go on meanwhile, into memory being faulted in.
            values.append(contentsOf: 1_000..<300_000)
            await group.waitForAll()
        }
        values.append(contentsOf: 300_000..<600_000)
        #expect(values.count == 600_000)
        #expect(values.enumerated().allSatisfy { $0.offset == $0.element })
        // Nothing is reserved once the array is full; parts out of range do nothing.
        if values.capacity == values.count { #expect(ReservedMemory.unwritten(&values) == nil) }
        memory.populate(part: parts, of: parts)
        memory.populate(part: -1, of: parts)
    }
}
