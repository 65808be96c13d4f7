import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerCore
@testable import BrokerFileStore

/// The file store's pages come from its ordered index; they must be exactly what filtering and sorting every account
/// gives, through inserts, rewrites that move an account to another end user, deletions and a restart.
struct AccountPagingTests {
    @Test func idsKeepByteOrderThroughAppendsSplitsAndRemovals() {
        var keys = SortedKeys<ExactKey>(chunkSize: 64)
        // A snapshot's ids first, in order, then the writes of a running store.
        var reference = (0..<500).map { "p:\(100_000 + $0)" }
        for id in reference { keys.append(ExactKey(id)) }
        var generator = SystemRandomNumberGenerator()
        // Enough ids to split buckets many times over, inserted out of order, some twice, some removed.
        for _ in 0..<3_000 {
            let id = "p:\(UInt32.random(in: 0..<20_000, using: &generator))"
            keys.insert(ExactKey(id))
            if !reference.contains(id) { reference.append(id) }
        }
        for id in reference.shuffled().prefix(reference.count / 3) {
            keys.remove(ExactKey(id))
            reference.removeAll { $0 == id }
        }
        reference.sort { ExactKey.precedes($0, $1) }
        #expect(keys.count == reference.count)
        #expect(keys.ascending(limit: .max).map(\.string) == reference)
        // From any point: the ids strictly after it, in order.
        for probe in [reference[0], reference[reference.count / 2], "p:1", "p:99999", "a", "q"] {
            let expected = reference.filter { ExactKey.precedes(probe, $0) }.prefix(100)
            #expect(keys.ascending(after: ExactKey(probe), limit: 100).map(\.string) == Array(expected), "\(probe)")
        }
        // One provider's range: from its prefix, while the prefix holds, after a cursor inside it.
        let prefix = "p:1"
        let inRange = reference.filter { $0.hasPrefix(prefix) }
        #expect(keys.ascending(from: ExactKey(prefix), after: nil, limit: .max) { $0.string.hasPrefix(prefix) }.map(\.string) == inRange)
        let cursor = ExactKey(inRange[inRange.count / 2])
        #expect(
            keys.ascending(from: ExactKey(prefix), after: cursor, limit: .max) { $0.string.hasPrefix(prefix) }.map(\.string)
                == Array(inRange[(inRange.count / 2 + 1)...]))
    }

    /// Random writes on a real store; after each round every filter's pages, walked to the end, list what the
    /// filter-and-sort reference lists, once each and in order.
    @Test func pagesMatchFilteringEveryAccountThroughWritesAndARestart() async throws {
        try await TemporaryDirectory.with { directory in
            var repository = try JSONFileAccountRepository(directory: directory)
            let providers = ["github", "git", "weibo", "a"]
            let owners = ["u1", "u2", "u3", nil]
            var expected: [String: Account] = [:]
            for round in 0..<4 {
                for step in 0..<300 {
                    let provider = providers[(step * 7 + round) % providers.count]
                    let uid = "\((step * 31 + round * 17) % 97)" + (step.isMultiple(of: 5) ? ":x" : "")
                    var account = Account.make(provider: provider, uid: uid)
                    if step.isMultiple(of: 9) {
                        _ = try await repository.delete(id: account.accountID)
                        expected[account.id] = nil
                        continue
                    }
                    account.endUser = owners[(step + round) % owners.count].map { EndUser(id: $0) }
                    account.tags = step.isMultiple(of: 2) ? ["plan": "pro"] : [:]
                    try await repository.put(account)
                    expected[account.id] = account
                }
                if round == 2 { repository = try JSONFileAccountRepository(directory: directory) }
                let filters: [AccountFilter] =
                    [AccountFilter()] + providers.map { AccountFilter(provider: $0) }
                    + owners.compactMap { $0 }.map { AccountFilter(endUserID: $0) }
                    + [
                        AccountFilter(provider: "github", endUserID: "u2"), AccountFilter(tags: ["plan": "pro"]),
                        AccountFilter(provider: "weibo", tags: ["plan": "pro"]), AccountFilter(provider: "gi"),
                    ]
                let all = expected.values.sorted { ExactKey.precedes($0.id, $1.id) }
                for (number, filter) in filters.enumerated() {
                    let want = all.filter(filter.matches).map(\.id)
                    var got: [String] = []
                    var after: AccountID?
                    repeat {
                        let page = try await repository.page(after: after, limit: 7, filter: filter)
                        #expect(page.accounts.count <= 7)
                        got += page.accounts.map(\.id)
                        after = page.nextAfter
                    } while after != nil
                    #expect(got == want, "round \(round), filter \(number)")
                }
            }
        }
    }
}
