import BrokerCore
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerApp

#if canImport(Glibc)
import Glibc
#endif

/// `BROKER_AUDIT_LOG`: one JSON line per token hand-out, refresh, revocation, deletion and finished flow, naming the
/// caller and the request; mode 0600; never a token, code, key or secret.
@Suite(.scoped) struct AuditTrailTests {
    static let clientSecret = "AUDIT-CLIENT-SECRET-SENTINEL-0123456789"
    static let opsKey = "AUDIT-OPS-KEY-SENTINEL-0123456789abcdef"

    @Test func aFullFlowLeavesOneEventPerActionAndNoSecret() async throws {
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: Self.clientSecret)
        configuration.names = .init(
            code: "AUDIT-CODE-SENTINEL-", access: "AUDIT-ACCESS-SENTINEL-", refresh: "AUDIT-REFRESH-SENTINEL-", random: true)
        configuration.pkce = .required
        var behaviour = FakeOAuth2Provider.Behaviour(dialect: .rfc6749)
        behaviour.users = .fixed("42")
        let acme = try FakeOAuth2Provider.scoped(configuration, behaviour: behaviour)
        let root = try TemporaryDirectory.scoped(prefix: "broker-audit")
        let path = root + "/audit.jsonl"
        let harness = try BrokerHarness(
            providersJSON: "{\"providers\": {\(acme.providerEntry(secretVariable: "ACME_SECRET"))}}",
            environment: ["ACME_SECRET": Self.clientSecret, "BROKER_API_KEYS": "ops:\(Self.opsKey)", "BROKER_AUDIT_LOG": path])
        let ops = [("Authorization", "Bearer " + Self.opsKey)]
        let browser = Browser(brokerPort: harness.port, providerPort: acme.port)
        #expect(await browser.connect(provider: "acme")?.status == 200)
        let read = await TestHTTP.send(port: harness.port, target: "/account?id=acme:42", headers: ops + [("X-Request-Id", "read-1")])
        #expect(read?.status == 200 && read?.header("X-Request-Id") == "read-1")
        #expect(await browser.get("/account?id=acme:42")?.status == 200)
        let refreshed = await TestHTTP.send(
            port: harness.port, method: "POST", target: "/account/refresh?id=acme:42", headers: ops + [("X-Request-Id", "refresh-1")])
        #expect(refreshed?.status == 200)
        // Refused callers are not handed anything, so they leave no event.
        #expect(
            await TestHTTP.send(port: harness.port, target: "/account?id=acme:42", headers: [("Authorization", "Bearer nope")])?.status
                == 401)
        let deleted = await TestHTTP.send(
            port: harness.port, method: "DELETE", target: "/account?id=acme:42", headers: ops + [("X-Request-Id", "delete-1")])
        #expect(deleted?.status == 204)
        await harness.stop()

        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let events = text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(events.count == text.split(separator: "\n").count)
        func event(_ name: String) -> [[String: Any]] { events.filter { $0["event"] as? String == name } }
        let flow = try #require(event("flow_completed").first)
        #expect(flow["caller"] as? String == "browser" && flow["account"] as? String == "acme:42" && flow["provider"] as? String == "acme")
        let reads = event("token_read")
        #expect(reads.count == 2)
        #expect(
            reads.contains {
                $0["caller"] as? String == "ops" && $0["request_id"] as? String == "read-1" && $0["outcome"] as? String == "ok"
            })
        #expect(reads.contains { $0["caller"] as? String == "browser" })
        #expect(event("token_refreshed").first?["request_id"] as? String == "refresh-1")
        let deletion = try #require(event("account_deleted").first)
        #expect(deletion["caller"] as? String == "ops" && deletion["request_id"] as? String == "delete-1")
        if acme.revokeCalls > 0 { #expect(event("account_revoked").first?["outcome"] as? String == "ok") }
        for e in events {
            #expect(e["ts"] is String && (e["request_id"] as? String)?.isEmpty == false, "\(e)")
        }
        // The same events are log lines too.
        #expect(harness.log.contains("\"event\":\"token_read\""))

        var sentinels = [Self.clientSecret, Self.opsKey, BrokerHarness.apiKey, "SENTINEL"]
        sentinels += acme.accessTokens + acme.ledger.verifiers
        sentinels += browser.jar.cookies.values.filter { $0.count > 16 }
        for sentinel in sentinels { #expect(!text.contains(sentinel), "the audit file holds \(sentinel.prefix(12))…") }
    }

    @Test func eventsAboutAnAccountNameTheEndUserItBelongsTo() async throws {
        var behaviour = FakeOAuth2Provider.Behaviour(dialect: .rfc6749)
        behaviour.users = .fixed("7")
        let acme = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: Self.clientSecret), behaviour: behaviour)
        let root = try TemporaryDirectory.scoped(prefix: "broker-audit")
        let path = root + "/audit.jsonl"
        let harness = try BrokerHarness(
            providersJSON: "{\"providers\": {\(acme.providerEntry(secretVariable: "ACME_SECRET"))}}",
            environment: ["ACME_SECRET": Self.clientSecret, "BROKER_API_KEYS": "ops:\(Self.opsKey)", "BROKER_AUDIT_LOG": path])
        let ops = [("Authorization", "Bearer " + Self.opsKey)]
        // A back end starts the flow for its user 42; the browser only follows the link.
        let started = try #require(
            await TestHTTP.send(
                port: harness.port, method: "POST", target: "/authorize",
                headers: ops + [("Content-Type", "application/x-www-form-urlencoded")], body: "provider=acme&end_user_id=user-42"))
        #expect(started.status == 200)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(started.body.utf8)) as? [String: Any])
        let browser = Browser(brokerPort: harness.port, providerPort: acme.port)
        let authorizeURL = try #require(json["authorize_url"] as? String)
        let callback = try #require(await browser.visitProvider(authorizeURL))
        let connected = try #require(await browser.get(callback))
        #expect(connected.status == 200)
        let id = "acme:7"
        #expect(await TestHTTP.send(port: harness.port, target: "/account?id=" + id, headers: ops)?.status == 200)
        await harness.stop()

        let events = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let read = try #require(events.first { $0["event"] as? String == "token_read" })
        #expect(read["end_user"] as? String == "user-42" && read["account"] as? String == id)
    }

    @Test func anUnopenableAuditLogStopsStartNamingTheVariable() throws {
        #expect(
            throws: ConfigurationError(
                variable: "BROKER_AUDIT_LOG", message: "cannot open /nonexistent-dir/audit: No such file or directory")
        ) {
            _ = try AuditLogFile(path: "/nonexistent-dir/audit")
        }
    }

    @Test func eventsReachTheFileWithinAFlushAndAfterClose() async throws {
        let root = try TemporaryDirectory.scoped(prefix: "audit-file")
        let file = try AuditLogFile(path: root + "/a.jsonl")
        file.append("{\"n\":1}")
        // The background flush writes without being asked.
        let written = await eventually { (try? String(contentsOfFile: root + "/a.jsonl", encoding: .utf8)) == "{\"n\":1}\n" }
        #expect(written)
        file.append("{\"n\":2}")
        file.close()
        file.append("{\"n\":3}")
        #expect(try String(contentsOfFile: root + "/a.jsonl", encoding: .utf8) == "{\"n\":1}\n{\"n\":2}\n")
    }
    /// Batch after batch, each one filling the buffer an earlier one was written from: every line reaches the file
    /// once, in order, whether a batch is larger or smaller than the one before; the log writer likewise.
    @Test func batchesThatRefillAnEarlierBatchsBufferWriteEachLineOnceInOrder() async throws {
        let root = try TemporaryDirectory.scoped(prefix: "audit-batches")
        let file = try AuditLogFile(path: root + "/a.jsonl")
        let logFD = open(root + "/log.txt", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(logFD) }
        let log = LogWriter(fd: logFD)
        var expected = ""
        var n = 0
        for size in [5, 300, 2, 40, 0, 1, 700, 3] {
            for _ in 0..<size {
                n += 1
                file.append("{\"n\":\(n)}")
                log.write("n=\(n)")
                expected += "{\"n\":\(n)}\n"
            }
            file.flush()
            log.flush()
        }
        file.close()
        #expect(try String(contentsOfFile: root + "/a.jsonl", encoding: .utf8) == expected)
        let logged = try String(contentsOfFile: root + "/log.txt", encoding: .utf8)
        #expect(logged == (1...n).map { "n=\($0)\n" }.joined())
    }

    /// Whether `text` is whole JSON lines only (each line an object, the last one ended by a newline).
    static func wholeLines(_ text: String) -> Bool {
        guard text.isEmpty || text.hasSuffix("\n") else { return false }
        return text.split(separator: "\n").allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) is [String: Any] }
    }

    /// A disk that fills mid-write (here the file size limit, `ulimit -f`, which cuts a write short just as a full disk
    /// does): the part written is cut back, so the file keeps whole lines; the events wait and are written once there
    /// is room, `/readyz` saying meanwhile that the audit trail is failing; events still unwritten at shutdown are
    /// reported as lost.
    @Test func aWriteCutShortIsCutBackAndItsEventsWrittenOnceThereIsRoom() async throws {
        let root = try TemporaryDirectory.scoped(prefix: "audit-full")
        let path = root + "/audit.jsonl"
        // The file may grow to 64 blocks of 512 bytes; it starts with whole lines 20 bytes short of that, less than
        // any audit event, so the first event's write is cut short whatever its length.
        let limit = 64 * 512
        func seedLine(_ length: Int) -> String {
            "{\"event\":\"seed\",\"pad\":\"" + String(repeating: "x", count: length - 26) + "\"}\n"
        }
        let full = (limit - 20) / 100
        let seed = String(repeating: seedLine(100), count: full) + seedLine(limit - 20 - full * 100)
        #expect(seedLine(100).utf8.count == 100 && seed.utf8.count == limit - 20)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(seed.utf8)))
        let broker = try await BrokerProcess.start(
            environment: ["BROKER_DATA_DIR": root + "/data", "BROKER_API_KEY": Self.opsKey, "BROKER_AUDIT_LOG": path],
            shell: "trap '' XFSZ; ulimit -S -f 64")
        func read(_ id: String) async -> Int? {
            await TestHTTP.send(
                port: broker.port, target: "/account?id=acme:1",
                headers: [("Authorization", "Bearer " + Self.opsKey), ("X-Request-Id", id)]
            )?.status
        }
        func ready() async -> TestHTTP.Reply? { await TestHTTP.send(port: broker.port, target: "/readyz") }
        func audit() -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        for id in ["full-1", "full-2", "full-3"] { #expect(await read(id) == 404) }

        let failing = await eventually { await ready()?.body.contains("audit_log_not_writable") == true }
        #expect(failing, "readyz says the audit trail is failing")
        #expect(await ready()?.status == 503)
        #expect(Self.wholeLines(audit()), "the short write was cut back: \(audit().suffix(120))")
        #expect(audit().utf8.count == seed.utf8.count)
        let metrics = await TestHTTP.send(port: broker.port, target: "/metrics")?.body ?? ""
        #expect(metrics.contains("broker_audit_events_unwritten 3") && metrics.contains("broker_audit_events_lost_total 0"))
        // The log line comes from the log's own thread, which may write it after readiness changed.
        #expect(await eventually { broker.log.contains("\"level\":\"error\",\"msg\":\"audit log write failed") })

        // Room again: the waiting events are written, whole, and readiness returns.
        let raised = try await runCapturing("/usr/bin/prlimit", ["--pid", "\(broker.pid)", "--fsize=unlimited:unlimited"])
        try #require(raised.status == 0, "prlimit: \(raised.stderr)")
        #expect(await eventually { await ready()?.status == 200 })
        let written = audit()
        #expect(Self.wholeLines(written) && written.hasPrefix(seed))
        for id in ["full-1", "full-2", "full-3"] { #expect(written.contains("\"request_id\":\"\(id)\""), "\(id)") }

        // Full again, and the broker stops before there is room: what it could not write is reported lost.
        let size = written.utf8.count
        let lowered = try await runCapturing("/usr/bin/prlimit", ["--pid", "\(broker.pid)", "--fsize=\(size):unlimited"])
        try #require(lowered.status == 0, "prlimit: \(lowered.stderr)")
        for id in ["lost-1", "lost-2"] { #expect(await read(id) == 404) }
        #expect(await eventually { await ready()?.status == 503 })
        broker.signal(SIGTERM)
        #expect(await broker.waitForExit(timeout: 60) == 0)
        #expect(audit() == written)
        let lost = broker.log.split(separator: "\n").first { $0.contains("\"msg\":\"audit events lost") }
        #expect(lost?.contains("\"level\":\"error\"") == true && lost?.contains("\"count\":2") == true, "\(lost ?? "no line")")
    }

    /// Past what it keeps waiting in memory, a failing audit file counts further events as lost: an ERROR line and
    /// `broker_audit_events_lost_total` say how many.
    @Test func eventsBeyondWhatWaitsInMemoryAreCountedLost() async throws {
        let root = try TemporaryDirectory.scoped(prefix: "audit-lost")
        #expect(symlink("/dev/full", root + "/audit.jsonl") == 0)
        let logFD = open(root + "/log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        defer { Glibc.close(logFD) }
        let logger = BrokerLogger(format: .json, writer: LogWriter(fd: logFD))
        let file = try AuditLogFile(path: root + "/audit.jsonl", logger: logger, retainBytes: 64)
        let line = "{\"n\":\"" + String(repeating: "a", count: 32) + "\"}"
        for _ in 0..<3 { file.append(line) }
        file.flush()
        #expect(file.health.lost == 2 && file.health.unwritten == 1 && file.health.failure == "No space left on device")
        let text = BrokerMetrics.renderAudit(file.health)
        #expect(text.contains("broker_audit_events_lost_total 2") && text.contains("broker_audit_events_unwritten 1"))
        file.close()
        #expect(file.health.lost == 3)
        logger.flush()
        let log = try String(contentsOfFile: root + "/log", encoding: .utf8)
        #expect(log.contains("\"level\":\"error\",\"msg\":\"audit events lost"), "\(log)")
    }

    /// A last line without its newline (a crash mid-write) is cut off when the file is opened, so the next event
    /// starts a line of its own.
    @Test func aTornLastLineIsCutOffAtOpen() throws {
        let root = try TemporaryDirectory.scoped(prefix: "audit-torn")
        let path = root + "/audit.jsonl"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("{\"n\":1}\n{\"ts\":\"2026-".utf8)))
        let file = try AuditLogFile(path: path)
        #expect(file.cutAtOpen == 12)
        file.append("{\"n\":2}")
        file.close()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"n\":1}\n{\"n\":2}\n")
    }

    /// Each audit field names the same key in a JSON line (`,"name":`) as in a text line (` name=`).
    @Test func eachFieldIsSpelledTheSameInBothKindsOfLine() {
        for field in AuditEvent.Field.all {
            let text = String(describing: field.text)
            #expect(text.hasPrefix(" ") && text.hasSuffix("=") && text.count > 2, "\(text)")
            let name = text.dropFirst().dropLast()
            #expect(String(describing: field.json) == ",\"" + name + "\":")
        }
    }

    /// A value with a byte either line escapes or quotes, wherever it sits (plain values are found eight bytes at a
    /// time), is written as every other log value is: JSON-escaped in the audit file, quoted in the text log.
    @Test func eventValuesAreEscapedAndQuotedWhereverTheSpecialByteIs() throws {
        let root = try TemporaryDirectory.scoped(prefix: "audit-values")
        let logFD = open(root + "/log.txt", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(logFD >= 0)
        defer { close(logFD) }
        let logger = BrokerLogger(format: .text, writer: LogWriter(fd: logFD))
        let file = try AuditLogFile(path: root + "/audit.jsonl")
        let trail = AuditTrail(logger: logger, file: file)
        var values = ["", "plain", "exactly8", "é-non-ascii-value", "ok"]
        for length in 1...17 {
            for position in 0..<length {
                for byte: UInt8 in [0x0A, 0x0D, 0x1F, 0x20, 0x22, 0x3D, 0x5C, 0x7F, 0xC3] {
                    var utf8 = [UInt8](repeating: UInt8(ascii: "k"), count: length)
                    utf8[position] = byte
                    // 0xC3 starts a two-byte sequence: complete it so the value is what it says.
                    if byte == 0xC3 { utf8.insert(0xA9, at: position + 1) }
                    values.append(String(decoding: utf8, as: UTF8.self))
                }
            }
        }
        for value in values {
            trail.record(
                AuditEvent(kind: .tokenRead, account: "p:1", provider: "p", endUser: nil, caller: value, requestID: "r", outcome: "ok"))
        }
        file.close()
        logger.flush()
        let fileLines = try String(contentsOfFile: root + "/audit.jsonl", encoding: .utf8).split(separator: "\n")
        let logLines = try String(contentsOfFile: root + "/log.txt", encoding: .utf8).split(separator: "\n")
        try #require(fileLines.count == values.count && logLines.count == values.count)
        for (index, value) in values.enumerated() {
            #expect(fileLines[index].contains(",\"caller\":" + JSONString.quote(value) + ",\"request_id\":"), "\(value.debugDescription)")
            var text = ""
            LogValue.string(value).appendText(to: &text)
            #expect(logLines[index].hasSuffix(" caller=" + text + " request_id=r outcome=ok"), "\(value.debugDescription)")
        }
    }

    /// A token read recorded from kept opening fields (as `GET /account` does from ``AccountRenderCache``) writes the
    /// same audit file and log lines as one recorded from the account, but for the time stamp; also with values
    /// either line escapes or quotes, with and without an end user and a scope.
    @Test func aTokenReadFromKeptOpeningFieldsWritesTheSameLines() throws {
        let root = try TemporaryDirectory.scoped(prefix: "audit-opening")
        func trail(_ name: String) throws -> (AuditTrail, AuditLogFile, BrokerLogger, Int32) {
            let fd = open(root + "/\(name).log", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            try #require(fd >= 0)
            let logger = BrokerLogger(format: .text, writer: LogWriter(fd: fd))
            let file = try AuditLogFile(path: root + "/\(name).jsonl")
            return (AuditTrail(logger: logger, file: file), file, logger, fd)
        }
        let (fromAccount, accountFile, accountLogger, accountFD) = try trail("account")
        let (fromOpening, openingFile, openingLogger, openingFD) = try trail("opening")
        defer {
            close(accountFD)
            close(openingFD)
        }
        var accounts = [AccountJSONTests.rich]
        for (provider, uid, endUser) in [
            ("weibo", "7", nil), ("we ibo", "a=b", "x\"y"), ("p", "caf\u{e9}", ""), ("p", "line\nbreak", "tab\tuser"),
        ] as [(String, String, String?)] {
            var account = Account(
                provider: provider, uid: uid, accessToken: Secret("t"), createdAt: Date(timeIntervalSince1970: 0),
                updatedAt: Date(timeIntervalSince1970: 0))
            account.endUser = endUser.map { EndUser(id: $0) }
            accounts.append(account)
        }
        let head = HTTPRequestHead(
            method: .GET, target: "/account", path: "/account", query: nil, version: .http1_1,
            headers: HTTPHeaders([("X-Request-Id", "read-1")]), keepAlive: true, expectContinue: false, framing: .none)
        let request = Request(head: head)
        for account in accounts {
            for (caller, scope) in [("ops", nil), ("a b", "tokens:read"), ("k\u{e9}y\"=", nil)] as [(String, String?)] {
                fromAccount.record(.tokenRead, account, id: account.id, caller: caller, request: request, scope: scope)
                let opening = AuditTrail.Opening(
                    .tokenRead, account: account.id, provider: account.provider, endUser: AuditEvent.endUser(of: account))
                fromOpening.recordTokenRead(opening, caller: AuditTrail.CallerField(caller), request: request, scope: scope)
            }
        }
        accountFile.close()
        openingFile.close()
        accountLogger.flush()
        openingLogger.flush()
        // The time stamps differ: the JSON line's `ts` and the text line's first word.
        func lines(_ path: String) throws -> [String] {
            try String(contentsOfFile: root + path, encoding: .utf8).split(separator: "\n").map { line in
                line.hasPrefix("{\"ts\":\"") ? String(line.dropFirst(32)) : String(line.drop { $0 != " " })
            }
        }
        let fileLines = try lines("/account.jsonl")
        let logLines = try lines("/account.log")
        #expect(fileLines.count == accounts.count * 3 && logLines.count == accounts.count * 3)
        #expect(try lines("/opening.jsonl") == fileLines)
        #expect(try lines("/opening.log") == logLines)
        #expect(fileLines.first?.hasPrefix(#","event":"token_read","account":"acme:u\"1\\2","provider":"acme","#) == true)
    }

    /// A proxied call recorded straight from its fields (as `/proxy` does) writes the same audit file and log lines as
    /// an ``AuditEvent`` of kind `proxy_call` with those details, but for the time stamp; with and without the parts a
    /// failed call lacks, and with values either line escapes or quotes.
    @Test func aProxyCallFromItsFieldsWritesTheSameLinesAsItsEvent() throws {
        let root = try TemporaryDirectory.scoped(prefix: "audit-proxy")
        var trails: [(AuditTrail, AuditLogFile, BrokerLogger, Int32)] = []
        for name in ["event", "entry"] {
            let fd = open(root + "/\(name).log", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            try #require(fd >= 0)
            let logger = BrokerLogger(format: .text, writer: LogWriter(fd: fd))
            let file = try AuditLogFile(path: root + "/\(name).jsonl")
            trails.append((AuditTrail(logger: logger, file: file), file, logger, fd))
        }
        defer { for trail in trails { close(trail.3) } }
        let entries = [
            AuditTrail.ProxyCallEntry(
                account: "acme:4242", provider: "acme", endUser: nil, caller: "ops", requestID: "r-1", outcome: "ok",
                method: "GET", host: "api.example.com", path: "/v1/items", status: 200, bytesSent: 0, bytesReceived: 1234,
                durationMS: 21.94),
            AuditTrail.ProxyCallEntry(
                account: "we ibo:a=b", provider: nil, endUser: "x\"y", caller: "k\u{e9}y\"=", requestID: "r 2",
                outcome: "upstream_timeout", method: "POST", host: nil, path: "/caf\u{e9}/line\nbreak", status: nil,
                bytesSent: 5, bytesReceived: 0, durationMS: 30_000.05),
        ]
        for entry in entries {
            var event = AuditEvent(
                kind: .proxyCall, account: entry.account, provider: entry.provider, endUser: entry.endUser,
                caller: entry.caller, requestID: entry.requestID, outcome: entry.outcome)
            event.details = [(.method, .string(entry.method))]
            if let host = entry.host { event.details.append((.host, .string(host))) }
            event.details.append((.path, .string(entry.path)))
            if let status = entry.status { event.details.append((.status, .int(status))) }
            event.details.append((.bytesSent, .int(entry.bytesSent)))
            event.details.append((.bytesReceived, .int(entry.bytesReceived)))
            event.details.append((.durationMS, .double(entry.durationMS, decimals: 1)))
            trails[0].0.record(event)
            trails[1].0.recordProxyCall(entry)
        }
        for trail in trails {
            trail.1.close()
            trail.2.flush()
        }
        func lines(_ path: String) throws -> [String] {
            try String(contentsOfFile: root + path, encoding: .utf8).split(separator: "\n").map { line in
                line.hasPrefix("{\"ts\":\"") ? String(line.dropFirst(32)) : String(line.drop { $0 != " " })
            }
        }
        let fileLines = try lines("/event.jsonl")
        #expect(fileLines.count == entries.count)
        #expect(try lines("/entry.jsonl") == fileLines)
        #expect(try lines("/entry.log") == lines("/event.log"))
        #expect(fileLines.first?.contains(#""status":200,"bytes_sent":0,"bytes_received":1234,"duration_ms":21.9}"#) == true)
    }

    /// The kept second of the time stamps gives the bytes of the general writer with milliseconds, within a second,
    /// across seconds, at the milliseconds that round up to the next second and outside the years it keeps.
    @Test func timeStampsFromTheKeptSecondAreTheGeneralWritersBytes() {
        let stamps = SecondStamps()
        var intervals: [Double] = [0, 0.0004, 0.9994, 0.9995, 0.9999, 1, 59.9996, 86_399.9996, 951_782_399.9996]
        for base in [1_796_025_600.0, 1_700_000_000.5, 253_402_300_799.0, -1.5, -62_135_596_801, 253_402_300_800.25] {
            for step in 0..<40 { intervals.append(base + Double(step) * 0.0373) }
        }
        intervals += [.nan, .infinity, -.infinity]
        for interval in intervals {
            let date = Date(timeIntervalSince1970: interval)
            var expected = [UInt8](repeating: 0, count: RFC3339Date.maximumCount)
            let expectedCount = expected.withUnsafeMutableBufferPointer { RFC3339Date.write(date, to: $0.baseAddress!, alwaysMillis: true) }
            var written = [UInt8](repeating: 0, count: RFC3339Date.maximumCount)
            let count = written.withUnsafeMutableBufferPointer { stamps.write(date, to: $0.baseAddress!) }
            #expect(count == expectedCount && written[..<count] == expected[..<expectedCount], "\(interval)")
        }
    }

    /// Threads stamping at once, their seconds changing under one another (each change a write of the kept second
    /// while others read it), each get the general writer's bytes: no stamp is made of two seconds' halves.
    @Test func timeStampsStayWholeWhileThreadsChangeTheKeptSecond() {
        let stamps = SecondStamps()
        let mismatches = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var expected = [UInt8](repeating: 0, count: RFC3339Date.maximumCount)
            var written = [UInt8](repeating: 0, count: RFC3339Date.maximumCount)
            for step in 0..<20_000 {
                // Each thread walks its own seconds, far apart in the calendar, so every few stamps replace the kept one.
                let date = Date(timeIntervalSince1970: 1_000_000_000 + Double(thread) * 31_536_000 + Double(step / 3) * 86_401.25)
                let expectedCount = expected.withUnsafeMutableBufferPointer {
                    RFC3339Date.write(date, to: $0.baseAddress!, alwaysMillis: true)
                }
                let count = written.withUnsafeMutableBufferPointer { stamps.write(date, to: $0.baseAddress!) }
                if count != expectedCount || written[..<count] != expected[..<expectedCount] { mismatches.add(1, ordering: .relaxed) }
            }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0)
    }

    /// Numbers are written in place with the same digits as the strings they were written from before: integers as
    /// `String(_:)` spells them, fixed-point values as `LogValue.fixed` rounds and pads them.
    @Test func numbersInBytesAreTheirStrings() {
        for value in [0, 7, -7, 10, 99, 100, 1_234_567, Int.max, Int.min] {
            var bytes = ByteWriter(capacity: 16)
            LogValue.int(value).appendJSON(to: &bytes)
            #expect(String(decoding: bytes.bytes, as: UTF8.self) == String(value))
        }
        for (value, decimals) in [
            (0.0, 1), (21.94, 1), (21.96, 1), (0.04, 1), (0.05, 1), (-0.05, 1), (-3.25, 2), (1.0005, 3), (12.0, 0),
            (1e12, 1), (999.99, 1), (3.14159, 4), (-1e15, 2), (0.001, 2),
        ] {
            var bytes = ByteWriter(capacity: 16)
            LogValue.double(value, decimals: decimals).appendJSON(to: &bytes)
            #expect(String(decoding: bytes.bytes, as: UTF8.self) == LogValue.fixed(value, decimals), "\(value) \(decimals)")
            var text = ByteWriter(capacity: 16)
            LogValue.double(value, decimals: decimals).appendText(to: &text)
            #expect(text.bytes == bytes.bytes)
        }
    }

    /// The audit line in the text log is quoted by the same rule as every other log value.
    @Test func textLogValuesAreQuotedByTheSameRuleInBytes() {
        for value in ["plain", "", "a b", "a=b", "say \"hi\"", "line\nbreak", "cr\rhere", "ls\u{2028}here", "caf\u{e9}"] {
            var text = ""
            LogValue.string(value).appendText(to: &text)
            var bytes = ByteWriter(capacity: 16)
            LogValue.string(value).appendText(to: &bytes)
            #expect(String(decoding: bytes.bytes, as: UTF8.self) == text, "\(value.debugDescription)")
        }
    }
}
