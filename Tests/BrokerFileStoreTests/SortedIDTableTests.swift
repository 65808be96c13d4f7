import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerCore
@testable import BrokerFileStore

/// The exact-id table over a snapshot's sorted ids (``SortedIDTable``) finds exactly the ids held, as the binary
/// search does, and the index and the file store answer the same with it as without it.
struct SortedIDTableTests {
    static func table(_ ids: [String], seed: UInt64) -> SortedIDTable? {
        var builder = SortedIDTable.Builder(count: ids.count, seed: seed)
        let hashes = ids.map { id in
            var id = id
            return id.withUTF8 { SortedIDTable.hash($0, seed: seed) }
        }
        // Added in two parts, as the file store adds slices.
        let half = ids.count / 2
        guard builder.add(hashes: Array(hashes[..<half]), firstSlot: 0),
            builder.add(hashes: Array(hashes[half...]), firstSlot: half)
        else { return nil }
        return builder.finish()
    }

    static func position(_ id: String, in table: SortedIDTable, ids: [String]) -> Int? {
        let keys = ids.map(ExactKey.init)
        var id = id
        return id.withUTF8 { target in keys.withUnsafeBufferPointer { table.position(of: target, keys: $0) } }
    }

    /// Every id of ``KeyOrderTests/held`` (around the 16-byte prefix, sharing it, NUL and non-ASCII bytes) is found
    /// at its slot, with several seeds, a seed of zero included; ids not held are not.
    @Test(arguments: [0, 1, 0xDEAD_BEEF, UInt64.max])
    func everyHeldIdIsFoundAndNoOther(seed: UInt64) throws {
        let ids = KeyOrderTests.held
        let table = try #require(Self.table(ids, seed: seed))
        for (slot, id) in ids.enumerated() { #expect(Self.position(id, in: table, ids: ids) == slot, "\(id)") }
        for absent in [
            "", "a\u{0}", "google-oauth2:123456789040", "google-oauth2:1234567890400", "google-oauth2:1", "weibo:3",
            "weibo:", "cafe:1", "caf\u{E9}:2", "z\u{0}\u{0}", String(repeating: "x", count: 21), "weibo:10 ",
        ] {
            #expect(Self.position(absent, in: table, ids: ids) == nil, "\(absent)")
        }
    }

    /// An empty table finds nothing; a build whose probe would go beyond the limit is refused.
    @Test func anEmptyTableAndAProbeBeyondTheLimit() throws {
        let empty = try #require(Self.table([], seed: 7))
        #expect(Self.position("a", in: empty, ids: []) == nil)
        // 300 ids in 1,024 entries with no probe allowed: some two share a home entry.
        let ids = (0..<300).map { "github:\($0)" }
        var builder = SortedIDTable.Builder(count: ids.count, seed: 7, probeLimit: 0)
        let hashes = ids.map { id in
            var id = id
            return id.withUTF8 { SortedIDTable.hash($0, seed: 7) }
        }
        let fitted = builder.add(hashes: hashes, firstSlot: 0)
        #expect(!fitted)
    }

    /// A store loaded from a snapshot answers every read the same before and after its table is built, and through
    /// deletions, returns and new ids after it.
    @Test func aStoreLoadedFromDiskFindsItsAccountsThroughTheTable() async throws {
        try await TemporaryDirectory.with { directory in
            let uids = (1...200).map(String.init) + ["12345678901234567890", "12345678901234567891", "é", "x\u{0}y"]
            do {
                let repository = try JSONFileAccountRepository(directory: directory)
                for uid in uids { try await repository.put(.make(uid: uid, accessToken: "token-" + uid)) }
                try await repository.compact()
            }
            let repository = try JSONFileAccountRepository(directory: directory)
            #expect(repository.buildIDTable())
            #expect(repository.usesIDTable)
            for uid in uids {
                #expect(
                    repository.heldNow(id: AccountID(provider: "github", uid: uid))?.account.accessToken.value == "token-" + uid, "\(uid)")
            }
            for absent in ["github:0", "github:201", "github:1234567890123456789", "github:e\u{301}", "github:x", "gitlab:1"] {
                #expect(repository.heldNow(id: try #require(AccountID(absent))) == nil, "\(absent)")
            }
            // Deleted: gone; stored again: back in its slot; a new id: found beside the snapshot's.
            _ = try await repository.delete(id: "github:7")
            _ = try await repository.delete(id: "github:12345678901234567890")
            #expect(repository.heldNow(id: "github:7") == nil)
            #expect(repository.heldNow(id: "github:12345678901234567890") == nil)
            #expect(repository.heldNow(id: "github:12345678901234567891") != nil)
            try await repository.put(.make(uid: "7", accessToken: "back"))
            try await repository.put(.make(uid: "0", accessToken: "new"))
            #expect(repository.heldNow(id: "github:7")?.account.accessToken.value == "back")
            #expect(repository.heldNow(id: "github:0")?.account.accessToken.value == "new")
            #expect(try await repository.get(id: "github:150")?.accessToken.value == "token-150")
            #expect(try await repository.list(provider: "github").count == uids.count)
        }
    }
}
