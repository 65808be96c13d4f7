import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerCore
@testable import BrokerFileStore

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
        #expect(index.firstSealed(with: codec.keyring.current.id) == "github:4")
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
}
