#if canImport(Glibc)
import Glibc
#endif
import BrokerCore
import BrokerCrypto
import BrokerRedis
import Foundation

/// Seeding and store-scaling measurements on the real JSON-file repository with sealed secrets.
enum StoreBench {
    static func repository(_ dir: String) throws -> (JSONFileAccountRepository, EncryptedAccountCodec) {
        try DataDirectory.prepare(dir)
        let (keyring, _) = try EncryptionKeyring.loadOrGenerate(
            environmentValue: ProcessInfo.processInfo.environment["BROKER_ENCRYPTION_KEY"], dataDirectory: dir)
        let codec = EncryptedAccountCodec(keyring: keyring)
        return (try JSONFileAccountRepository(directory: dir, codec: codec), codec)
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

    static func account(_ i: Int, now: Date) -> Account {
        Account(provider: "weibo", uid: String(i), accessToken: Secret("2.00bench-token-\(i)"), tokenType: "bearer",
                expiresAt: now.addingTimeInterval(157_679_999), createdAt: now, updatedAt: now)
    }

    /// Writes `count` accounts `weibo:0` … `weibo:count-1`, 64 in flight at a time.
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
    }

    static func rssKB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return 0
    }

    /// For each size: open (start-up) time, RSS growth, mean durable write and mean read.
    static func scaling(root: String, sizes: [Int]) async throws {
        print("| accounts | open ms | RSS after open MiB | write µs (durable, mean of 200) | read µs (mean of 100,000) |")
        print("|---:|---:|---:|---:|---:|")
        for size in sizes {
            let dir = root + "/store-\(size)"
            if !FileManager.default.fileExists(atPath: dir + "/accounts") || (try? FileManager.default.contentsOfDirectory(atPath: dir + "/accounts").count) ?? 0 < size {
                try? FileManager.default.removeItem(atPath: dir)
                try await seed(dir, count: size)
            }
            let before = rssKB()
            let t0 = Date()
            let (repo, _) = try repository(dir)
            let openMS = Date().timeIntervalSince(t0) * 1000
            let rss = Double(rssKB()) / 1024
            _ = before
            let now = Date()
            let t1 = Date()
            for i in 0..<200 { try await repo.put(account(size + i, now: now)) }
            let writeUS = Date().timeIntervalSince(t1) / 200 * 1e6
            let t2 = Date()
            var found = 0
            for i in 0..<100_000 where try await repo.get(id: "weibo:\((i &* 7919) % max(size, 1))") != nil { found += 1 }
            let readUS = Date().timeIntervalSince(t2) / 100_000 * 1e6
            precondition(found > 0)
            for i in 0..<200 { _ = try await repo.delete(id: "weibo:\(size + i)") }
            print(String(format: "| %d | %.0f | %.1f | %.0f | %.2f |", size, openMS, rss, writeUS, readUS))
        }
    }
}
