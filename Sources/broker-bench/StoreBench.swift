import BrokerCore
import BrokerCrypto
import BrokerFileStore
import BrokerRedis
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Seeding and store-scaling measurements on the real JSON-file repository with sealed secrets.
enum StoreBench {
    static func repository(_ dir: String, openSealedInBackground: Bool = true) throws -> (JSONFileAccountRepository, EncryptedAccountCodec)
    {
        try DataDirectory.prepare(dir)
        let (keyring, _) = try EncryptionKeyring.loadOrGenerate(
            environmentValue: ProcessInfo.processInfo.environment["BROKER_ENCRYPTION_KEY"], dataDirectory: dir)
        let codec = EncryptedAccountCodec(keyring: keyring)
        return (try JSONFileAccountRepository(directory: dir, codec: codec, openSealedInBackground: openSealedInBackground), codec)
    }

    /// Writes `count` sealed accounts into the Redis at `url`, with the key in BROKER_ENCRYPTION_KEY.
    static func seedRedis(_ url: String, count: Int, keyDirectory: String) async throws {
        try DataDirectory.prepare(keyDirectory)
        let (keyring, _) = try EncryptionKeyring.loadOrGenerate(
            environmentValue: ProcessInfo.processInfo.environment["BROKER_ENCRYPTION_KEY"], dataDirectory: keyDirectory)
        let stores = RedisStores(url: try RedisURL(parsing: url), codec: EncryptedAccountCodec(keyring: keyring), poolSize: 8)
        let now = Date()
        var next = 0
        while next < count {
            let batch = min(256, count - next)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in next..<(next + batch) { group.addTask { try await stores.accounts.put(account(i, now: now)) } }
                try await group.waitForAll()
            }
            next += batch
        }
    }

    /// What `/metrics` pays to count the accounts in the Redis at `url` by status: the first count after the
    /// counts were dropped (it indexes every record once, as after an upgrade), then the median of 21 scrapes.
    static func countRedis(_ url: String, keyDirectory: String) async throws -> (firstMS: Double, scrapeMS: Double, counted: Int) {
        try DataDirectory.prepare(keyDirectory)
        let (keyring, _) = try EncryptionKeyring.loadOrGenerate(
            environmentValue: ProcessInfo.processInfo.environment["BROKER_ENCRYPTION_KEY"], dataDirectory: keyDirectory)
        let stores = RedisStores(url: try RedisURL(parsing: url), codec: EncryptedAccountCodec(keyring: keyring), poolSize: 2)
        _ = try await stores.client.command("DEL", "tb:census:reauthorization_required", "tb:census:expiring", "tb:census:ready")
        let t0 = Date()
        let first = try await stores.accounts.statusCounts(at: Date())
        let firstMS = Date().timeIntervalSince(t0) * 1000
        var scrapes: [Double] = []
        for _ in 0..<21 {
            let t1 = Date()
            _ = try await stores.accounts.statusCounts(at: Date())
            scrapes.append(Date().timeIntervalSince(t1) * 1000)
        }
        return (firstMS, scrapes.sorted()[scrapes.count / 2], first.active + first.expired + first.reauthorizationRequired)
    }

    static func account(_ i: Int, now: Date) -> Account {
        Account(
            provider: "weibo", uid: String(i), accessToken: Secret("2.00bench-token-\(i)"), tokenType: "bearer",
            expiresAt: now.addingTimeInterval(157_679_999), createdAt: now, updatedAt: now)
    }

    /// Writes `count` accounts `weibo:0` … `weibo:count-1`, 256 in flight at a time, then compacts the store.
    static func seed(_ dir: String, count: Int, from start: Int = 0) async throws {
        let (repo, _) = try repository(dir)
        let now = Date()
        var next = start
        while next < start + count {
            let batch = min(256, start + count - next)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in next..<(next + batch) { group.addTask { try await repo.put(account(i, now: now)) } }
                try await group.waitForAll()
            }
            next += batch
        }
        // Leaves the store compacted, as one that has run a while, with no background compaction still writing when a
        // caller opens the directory again.
        try await repo.compact()
    }

    /// Writes `count` sealed accounts straight into a snapshot (no journal), as a store that has run a while and
    /// compacted leaves it; every account belongs to one of `owners` end users (`user-<i % owners>`) when `owners` > 0.
    ///
    /// Seconds for a million accounts, where durable writes one by one take many minutes.
    static func seedSnapshot(_ dir: String, count: Int, owners: Int) throws {
        try DataDirectory.prepare(dir)
        let (keyring, _) = try EncryptionKeyring.loadOrGenerate(
            environmentValue: ProcessInfo.processInfo.environment["BROKER_ENCRYPTION_KEY"], dataDirectory: dir)
        let codec = EncryptedAccountCodec(keyring: keyring)
        let now = Date()
        var records: [(id: String, bytes: [UInt8])] = []
        records.reserveCapacity(count)
        for i in 0..<count {
            var account = account(i, now: now)
            if owners > 0 { account.endUser = EndUser(id: "user-\(i % owners)") }
            records.append((account.id, JSONLine.compact(try codec.encode(account))))
        }
        records.sort { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
        _ = try AccountSnapshotWriter.write(
            records: records, to: dir + "/" + AccountStoreFormat.snapshotName, journal: 1, number: 0, keepOpen: false)
        try SealedStoreMarker.write(in: dir)
    }

    static func rssKB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return 0
    }

    /// For each size: open (start-up) time, the time to decrypt every sealed record, RSS, mean durable write, mean read,
    /// and the count by status that every `/metrics` scrape makes.
    ///
    /// The store is opened without its background decrypting pass, which is
    /// then run and timed on its own, so reads and writes are measured on the
    /// steady state a running broker reaches (the pass shares the index lock
    /// and would otherwise be timed with the first reads).
    static func scaling(root: String, sizes: [Int]) async throws {
        print(
            "| accounts | open ms | decrypt all ms | RSS after open MiB | first count by status ms | write µs (durable, mean of 200) | read µs (median of 5 × 100,000) | count by status µs (median of 21) |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        var costs: [Int: (write: Double, read: Double)] = [:]
        for size in sizes {
            let dir = root + "/store-\(size)"
            // A store seeded by an earlier run is kept (its marker sits beside it, not in the data directory).
            let seeded = root + "/store-\(size).seeded"
            if !FileManager.default.fileExists(atPath: seeded) {
                try? FileManager.default.removeItem(atPath: dir)
                try await seed(dir, count: size)
                guard FileManager.default.createFile(atPath: seeded, contents: nil) else { throw POSIXError(.EIO) }
            }
            let t0 = Date()
            let (repo, _) = try repository(dir, openSealedInBackground: false)
            let openMS = Date().timeIntervalSince(t0) * 1000
            let tDecrypt = Date()
            let failures = repo.openSealedAccounts()
            let decryptMS = Date().timeIntervalSince(tDecrypt) * 1000
            precondition(failures.isEmpty, "sealed records did not open: \(failures)")
            let rss = Double(rssKB()) / 1024
            let now = Date()
            // The first count sorts the expiries the load appended; later writes keep them in order.
            let tCount = Date()
            _ = try await repo.statusCounts(at: now)
            let firstCountMS = Date().timeIntervalSince(tCount) * 1000
            let t1 = Date()
            for i in 0..<200 { try await repo.put(account(size + i, now: now)) }
            let writeUS = Date().timeIntervalSince(t1) / 200 * 1e6
            // The median of 5 passes of 100,000 reads over the ids in a scattered order.
            var passes: [Double] = []
            for pass in 0..<5 {
                let t2 = Date()
                var found = 0
                for i in 0..<100_000
                where try await repo.get(id: AccountID(provider: "weibo", uid: "\((i &* 7919 &+ pass) % max(size, 1))")) != nil {
                    found += 1
                }
                passes.append(Date().timeIntervalSince(t2) / 100_000 * 1e6)
                precondition(found > 0)
            }
            let readUS = passes.sorted()[passes.count / 2]
            for i in 0..<200 { _ = try await repo.delete(id: AccountID(provider: "weibo", uid: "\(size + i)")) }
            var counts: [Double] = []
            for _ in 0..<21 {
                let t3 = Date()
                let counted = try await repo.statusCounts(at: now)
                counts.append(Date().timeIntervalSince(t3) * 1e6)
                precondition(counted.active + counted.expired + counted.reauthorizationRequired == size)
            }
            let countUS = counts.sorted()[counts.count / 2]
            print(
                String(
                    format: "| %d | %.0f | %.0f | %.1f | %.1f | %.0f | %.2f | %.2f |", size, openMS, decryptMS, rss, firstCountMS,
                    writeUS, readUS, countUS))
            costs[size] = (writeUS, readUS)
        }
        guard let base = costs[1000], let largest = sizes.max(), largest > 1000, let top = costs[largest] else { return }
        print()
        for (name, ratio) in [("write", top.write / base.write), ("read", top.read / base.read)] {
            print(
                "- \(ratio <= 1.5 ? "PASS" : "FAIL") \(name) at \(largest) accounts costs "
                    + String(format: "%.2f", ratio) + "× its cost at 1,000 (target ≤ 1.5)")
        }
    }
}
