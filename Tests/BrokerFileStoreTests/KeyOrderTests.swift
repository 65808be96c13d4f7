import Testing

@testable import BrokerCore
@testable import BrokerFileStore

/// The search over a snapshot's sorted ids (``KeyOrder/position(of:in:prefixes:count:)``) finds exactly the ids held.
struct KeyOrderTests {
    /// Ids of every length around the 16-byte prefix, many sharing their first 16 bytes, a prefix of another, with
    /// zero bytes and non-ASCII bytes: byte order decides.
    static let held: [String] = {
        var ids: Set<String> = ["a", "ab", "b", "weibo:1", "weibo:10", "weibo:2", "caf\u{E9}:1", "cafe\u{301}:1", "z\u{0}", "z"]
        let long = "google-oauth2:1234567890"
        for n in 0..<40 { ids.insert(long + String(n)) }
        for n in 0..<40 { ids.insert(String(long.prefix(15)) + String(n)) }
        for length in 1...20 { ids.insert(String(repeating: "x", count: length)) }
        for n in 0..<500 { ids.insert("weibo:" + String(n * 7)) }
        return ids.sorted { KeyOrder.compare(ExactKey($0), ExactKey($1)) < 0 }
    }()

    static func position(_ id: String, count: Int? = nil) -> Int? {
        let keys = held.map(ExactKey.init)
        let prefixes = keys.map { KeyOrder.Prefix($0) }
        return KeyOrder.position(of: ExactKey(id), in: keys, prefixes: prefixes, count: count ?? keys.count)
    }

    @Test func everyHeldIdIsFoundAtItsPlace() {
        for (index, id) in Self.held.enumerated() { #expect(Self.position(id) == index, "\(id)") }
    }

    @Test func anIdNotHeldIsNotFound() {
        let absent = [
            "", "0", "aa", "c", "weibo:3", "weibo:", "weibo:1 ", "google-oauth2:1234567890", "google-oauth2:1234567890x",
            "google-oauth2:123456789041", String(repeating: "x", count: 21), "z\u{0}\u{0}", "caf\u{E9}", "\u{FFFF}",
            "cafe:1", "weibo:7000", "weibo:3494",
        ]
        for id in absent { #expect(Self.position(id) == nil, "\(id)") }
    }

    @Test func onlyTheFirstCountIdsAreSearched() {
        for count in [1, 2, 3, 17, 100] {
            for (index, id) in Self.held.enumerated() {
                #expect(Self.position(id, count: count) == (index < count ? index : nil), "\(id) in \(count)")
            }
        }
    }
}
