import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

/// Storage that stops taking writes, without mounts: the data directory is swapped for a plain
/// file, so every new file fails as on a full or read-only disk, and the account journal the
/// broker keeps open is pointed at /dev/full (``FullDisk``), so its appends fail with ENOSPC
/// (catalogue item 46). `scripts/disk-full` does the same on a real full and read-only tmpfs.
@Suite(.scoped) struct DiskFullTests {
    static let clientSecret = "WEIBO-CLIENT-SECRET-SENTINEL-diskfull"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
    static let first = "weibo:3733034601"
    static let second = "weibo:2000000002"

    struct Setup {
        let weibo: FakeOAuth2Provider
        let broker: BrokerHarness
        var browser: Browser { Browser(brokerPort: broker.port, providerPort: weibo.port) }
        /// The latest stored record of every account, by id, as it lies on disk.
        func storedRecords() throws -> [String: [UInt8]] { try AccountStoreFiles.records(in: broker.dataDirectory) }

        func get(_ target: String, headers: [(String, String)] = DiskFullTests.api) async -> TestHTTP.Reply? {
            await TestHTTP.send(port: broker.port, target: target, headers: headers)
        }

        /// Swaps `path` for a plain file until `restore` is called.
        func breakDirectory(_ path: String) throws -> () throws -> Void {
            try FileManager.default.moveItem(atPath: path, toPath: path + ".aside")
            #expect(FileManager.default.createFile(atPath: path, contents: Data("not a directory".utf8)))
            return {
                try FileManager.default.removeItem(atPath: path)
                try FileManager.default.moveItem(atPath: path + ".aside", toPath: path)
            }
        }

        /// Fills the disk under the data directory: no file can be created in it and no account journal line appended.
        func fillDisk() throws -> () throws -> Void {
            let emptyJournal = try FullDisk.fillAccountJournal(in: broker.dataDirectory)
            let restoreDirectory = try breakDirectory(broker.dataDirectory)
            return {
                try restoreDirectory()
                try emptyJournal()
            }
        }
    }

    static func setUp(dataDirectory: String? = nil) throws -> Setup {
        let weibo = try FakeOAuth2Provider.scoped(.weibo(clientSecret: clientSecret))
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(weibo.providerEntry)}}",
            environment: ["FAKE_WEIBO_SECRET": clientSecret], dataDirectory: dataDirectory)
        return Setup(weibo: weibo, broker: broker)
    }

    static func isStorageUnavailable(_ reply: TestHTTP.Reply?) -> Bool {
        reply?.status == 503 && reply?.body.contains("\"error\":\"storage_unavailable\"") == true
    }

    /// The bytes of every file in `directory`, by name.
    static func files(in directory: String) -> [String: Data] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Dictionary(uniqueKeysWithValues: names.map { ($0, FileManager.default.contents(atPath: directory + "/" + $0) ?? Data()) })
    }

    @Test func anUnwritableDataDirectoryRefusesWritesKeepsWhatIsStoredAndRecovers() async throws {
        let s = try Self.setUp()
        #expect(await s.browser.connect(provider: "weibo")?.status == 200)
        let before = try s.storedRecords()
        // The next sign-in is another user's, so that it makes a second account.
        s.weibo.set { $0.users = .fixed("2000000002") }
        let pending = s.browser
        let start = try #require(await pending.authorize("provider=weibo"))
        let callback = try #require(await pending.visitProvider(start.header("Location")!))
        let flowCookie = pending.jar.header

        let restore = try s.fillDisk()
        let ready = await s.get("/readyz")
        #expect(ready?.status == 503)
        #expect(ready?.body.contains("storage_not_writable") == true)
        #expect(await s.get("/healthz")?.status == 200)
        #expect(Self.isStorageUnavailable(await pending.get(callback)))
        #expect(Self.isStorageUnavailable(await s.browser.authorize("provider=weibo")))
        #expect(await s.get("/account?id=" + Self.first)?.status == 200)
        #expect(s.weibo.tokenCalls == 1)

        try restore()
        #expect(await s.get("/readyz")?.status == 200)
        // The refused callback never took its flow: sent again with its flow cookie, it finishes now.
        #expect(await s.get(callback, headers: flowCookie)?.status == 200)
        #expect(await s.get("/account?id=" + Self.second)?.status == 200)
        let after = try s.storedRecords()
        #expect(after.keys.sorted() == [Self.second, Self.first])
        #expect(before.allSatisfy { after[$0.key] == $0.value })
        await s.broker.stop()

        let again = try Self.setUp(dataDirectory: s.broker.dataDirectory)
        #expect(await again.get("/account?id=" + Self.first)?.status == 200)
        #expect(await again.get("/account?id=" + Self.second)?.status == 200)
    }

    @Test func anAccountWriteThatFailsAfterTheExchangeLeavesNoPartialRecord() async throws {
        let s = try Self.setUp()
        #expect(await s.browser.connect(provider: "weibo")?.status == 200)
        let before = try s.storedRecords()
        let journal = Self.files(in: s.broker.dataDirectory).filter { $0.key.hasPrefix("accounts.") }
        s.weibo.set { $0.users = .fixed("2000000002") }

        // Only the account journal is full: the flow was taken and the exchange done before its write fails.
        let restore = try FullDisk.fillAccountJournal(in: s.broker.dataDirectory)
        let reply = await s.browser.connect(provider: "weibo")
        #expect(Self.isStorageUnavailable(reply))
        #expect(reply?.body.contains("SENTINEL") == false)
        #expect(s.weibo.tokenCalls == 2)
        let stillThere = await s.get("/account?id=" + Self.first)
        #expect(
            stillThere?.status == 200,
            "the first account while the directory is broken: \(String(describing: stillThere?.status)) \(stillThere?.body.prefix(200) ?? "no answer")"
        )
        #expect(await s.get("/account?id=" + Self.second)?.status == 404)

        try restore()
        #expect(try s.storedRecords() == before)
        #expect(Self.files(in: s.broker.dataDirectory).filter { $0.key.hasPrefix("accounts.") } == journal)
        let list = await s.get("/accounts")
        #expect(list?.body.contains(Self.first) == true && list?.body.contains(Self.second) == false)
        #expect(!s.broker.log.contains("SENTINEL"))
        #expect(s.broker.log.contains("storage_unavailable"))
        // Service resumes: the same dance now stores the second account, and a restart loads both.
        #expect(await s.browser.connect(provider: "weibo")?.status == 200)
        await s.broker.stop()
        let again = try Self.setUp(dataDirectory: s.broker.dataDirectory)
        let all = await again.get("/accounts")
        #expect(all?.body.contains(Self.first) == true && all?.body.contains(Self.second) == true)
    }
}
