import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// A sealed record whose bytes were changed on disk: the broker finds it right after start, says so once (log,
/// metric, `/readyz`), and answers its reads with an error that tells clients not to retry; the other accounts serve.
@Suite(.serialized, .scoped) struct DamagedRecordTests {
    /// The record with one character of its access token's ciphertext changed: still well formed, no longer authentic.
    static func tamper(_ record: [UInt8]) throws -> [UInt8] {
        var text = String(decoding: record, as: UTF8.self)
        let envelope = try #require(text.range(of: "\"access_token\":{"))
        let cipher = try #require(text.range(of: "\"ct\":\"", range: envelope.upperBound..<text.endIndex))
        let first = text[cipher.upperBound]
        text.replaceSubrange(cipher.upperBound...cipher.upperBound, with: first == "A" ? "B" : "A")
        return Array(text.utf8)
    }

    @Test func aTamperedRecordIsReportedAtStartAndAnswersAnErrorThatIsNotRetryable() async throws {
        let s = try await BackupRestoreTests.setUp(accounts: 3)
        let list = try #require(await TestHTTP.send(port: s.harness.port, target: "/accounts", headers: s.ops))
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(list.body.utf8)) as? [String: Any])
        let ids = ((listed["accounts"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }.sorted()
        #expect(ids.count == 3)
        var tokens: [String: String] = [:]
        for id in ids { tokens[id] = await s.accessToken(id) }
        await s.harness.stop()

        let victim = ids[1]
        try AccountStoreFiles.rewrite(in: s.harness.dataDirectory) { id, record in id == victim ? try Self.tamper(record) : record }
        let restarted = try BrokerHarness(
            providersJSON: "{\"providers\": {\(s.provider.providerEntry(secretVariable: "ACME_SECRET"))}}",
            environment: [
                "ACME_SECRET": BackupRestoreTests.clientSecret, "BROKER_API_KEYS": "ops:\(BackupRestoreTests.opsKey)",
                "BROKER_ENCRYPTION_KEY": BackupRestoreTests.encryptionKey, "BROKER_REFRESH_INTERVAL": "0",
            ], dataDirectory: s.harness.dataDirectory)

        // The background pass finds it without any read: one ERROR line naming the account, never a token.
        #expect(await eventually(timeout: 60) { restarted.log.contains("account record damaged") })
        let lines = restarted.log.split(separator: "\n").filter { $0.contains("account record damaged") }
        #expect(lines.count == 1 && lines[0].contains("\"level\":\"error\"") && lines[0].contains(victim))
        #expect(!restarted.log.contains(tokens[victim] ?? "no token"))
        let ready = try #require(await TestHTTP.send(port: restarted.port, target: "/readyz"))
        #expect(ready.status == 200 && ready.body == "{\"status\":\"degraded\",\"reason\":\"account_records_damaged\"}", "\(ready.body)")
        let metrics = try #require(await TestHTTP.send(port: restarted.port, target: "/metrics"))
        #expect(metrics.body.contains("\nbroker_account_records_damaged 1\n"))

        // Its reads: 500 record_damaged, not 503 "try again later"; the other accounts serve as before.
        let read = try #require(await TestHTTP.send(port: restarted.port, target: "/account?id=" + victim, headers: s.ops))
        #expect(read.status == 500, "\(read.body)")
        #expect(read.body.contains("\"error\":\"record_damaged\"") && read.header("Retry-After") == nil)
        #expect(!read.body.contains(s.harness.dataDirectory))
        for id in ids where id != victim {
            #expect(await s.accessToken(id, port: restarted.port) == tokens[id])
        }
        // Read again, it is not reported again.
        _ = await TestHTTP.send(port: restarted.port, target: "/account?id=" + victim, headers: s.ops)
        #expect(restarted.log.split(separator: "\n").filter { $0.contains("account record damaged") }.count == 1)
    }
}
