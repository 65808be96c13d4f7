import BrokerCore
import BrokerCrypto
import BrokerFileStore
import Foundation

/// The account journal at a given number of accounts: its size, what replaying it costs, and what compacting it into a
/// snapshot costs.
enum AccountCompactionBench {
    /// Writes `count` new sealed accounts into a fresh store in `directory` (256 in flight, no compaction until asked),
    /// times opening a second store on the directory as start-up would (the journal replayed, no snapshot), then one
    /// ``JSONFileAccountRepository/compact()``, then opening a store on the result (the snapshot alone). Prints
    /// `accounts=N journal_bytes=J replay_ms=R compact_ms=C snapshot_bytes=S snapshot_open_ms=O`.
    static func run(directory: String, count: Int) async throws {
        try DataDirectory.prepare(directory)
        let (keyring, _) = try EncryptionKeyring.loadOrGenerate(
            environmentValue: ProcessInfo.processInfo.environment["BROKER_ENCRYPTION_KEY"], dataDirectory: directory)
        let codec = EncryptedAccountCodec(keyring: keyring)
        let repo = try JSONFileAccountRepository(directory: directory, codec: codec, compactionThreshold: Int.max)
        let now = Date()
        var next = 0
        while next < count {
            let batch = min(256, count - next)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in next..<(next + batch) { group.addTask { try await repo.put(StoreBench.account(i, now: now)) } }
                try await group.waitForAll()
            }
            next += batch
        }
        let journalBytes = bytes(in: directory, where: { $0.hasPrefix("accounts.journal.") })

        let replayMS = try await timedOpen(
            directory, codec: codec, lastID: AccountID(provider: "weibo", uid: "\(count - 1)"), what: "the replayed store")

        let t1 = ContinuousClock.now
        try await repo.compact()
        let compactMS = milliseconds(t1.duration(to: .now))
        let snapshotBytes = bytes(in: directory, where: { $0 == "accounts.snapshot.jsonl" })

        let openMS = try await timedOpen(
            directory, codec: codec, lastID: AccountID(provider: "weibo", uid: "\(count - 1)"), what: "the compacted store")
        print(
            String(
                format: "accounts=%d journal_bytes=%d replay_ms=%.0f compact_ms=%.0f snapshot_bytes=%d snapshot_open_ms=%.0f",
                count, journalBytes, replayMS, compactMS, snapshotBytes, openMS))
    }

    /// Opens a second store on `directory` as start-up does (nothing opened in the background, no compaction), checks it
    /// holds `lastID`, and returns the milliseconds the opening took.
    private static func timedOpen(_ directory: String, codec: EncryptedAccountCodec, lastID: AccountID, what: String) async throws -> Double
    {
        let start = ContinuousClock.now
        let store = try JSONFileAccountRepository(
            directory: directory, codec: codec, openSealedInBackground: false, compactionThreshold: Int.max)
        let elapsed = milliseconds(start.duration(to: .now))
        let last = try await store.get(id: lastID)
        precondition(last != nil, "\(what) lacks the last account")
        return elapsed
    }

    private static func bytes(in directory: String, where matches: (String) -> Bool) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter(matches).reduce(0) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
        }
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }
}
