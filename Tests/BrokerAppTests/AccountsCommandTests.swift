import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

#if canImport(Glibc)
import Glibc
#endif

/// `token-broker accounts …` against a real broker process: output for people and as JSON, refusals, settings, usage.
@Suite(.serialized, .scoped) struct AccountsCommandTests {
    static let apiKey = "cli-test-api-key-0123456789"
    static let clientSecret = "ACME-CLIENT-SECRET-SENTINEL-0123456789"

    struct Setup {
        let broker: BrokerProcess
        let provider: FakeOAuth2Provider
        /// What the CLI runs with: BROKER_URL and BROKER_API_KEY for this broker.
        let environment: [String: String]

        /// Runs `token-broker accounts …` with `environment`, changed by `changes` (nil removes a variable).
        func cli(
            _ arguments: [String], _ changes: [String: String?] = [:], stdin: Int32? = nil
        ) async throws -> (status: Int32, stdout: String, stderr: String) {
            var env = environment
            for (name, value) in changes { env[name] = value }
            return try await runBrokerCapturingOutput(["accounts"] + arguments, environment: env, stdin: stdin)
        }

        /// Connects account acme:`uid` for end user `endUser` with `tags`, as a back end does (`POST /authorize`).
        func connect(uid: String, endUser: String, tags: String) async throws -> Bool {
            provider.set { $0.users = .fixed(uid) }
            defer { provider.set { $0.users = .fixed("4242") } }
            let browser = Browser(brokerPort: broker.port, providerPort: provider.port)
            let start = try #require(
                await TestHTTP.send(
                    port: broker.port, method: "POST", target: "/authorize",
                    headers: [("Authorization", "Bearer " + AccountsCommandTests.apiKey), ("Content-Type", "application/json")],
                    body: #"{"provider":"acme","end_user_id":"\#(endUser)","tags":\#(tags)}"#))
            let object = try JSONSerialization.jsonObject(with: Data(start.body.utf8)) as? [String: Any]
            let url = try #require(object?["authorize_url"] as? String, "\(start.status) \(start.body)")
            let callback = try #require(await browser.visitProvider(url))
            return await browser.get(callback)?.status == 200
        }

        /// Connects account acme:4242 (with a refresh token) from a fresh browser.
        func connect() async -> Bool {
            await Browser(brokerPort: broker.port, providerPort: provider.port).connect(provider: "acme")?.status == 200
        }

        /// The broker's list of account ids, read with the API key.
        func storedIDs() async -> String {
            await TestHTTP.send(
                port: broker.port, target: "/accounts", headers: [("Authorization", "Bearer " + AccountsCommandTests.apiKey)])?.body ?? ""
        }
    }

    /// A broker process whose `acme` provider is an in-process fake, with account acme:4242 connected; stopped however `body` ends.
    static func withBroker(
        configure: @escaping @Sendable (inout FakeOAuth2Provider.Behaviour) -> Void = { _ in },
        _ body: (Setup) async throws -> Void
    ) async throws {
        let root = NSTemporaryDirectory() + "broker-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: clientSecret))
        provider.set(configure)
        try Data("{\"providers\": {\(provider.providerEntry)}}".utf8).write(to: URL(fileURLWithPath: root + "/providers.json"))
        let broker = try await BrokerProcess.start(environment: [
            "BROKER_DATA_DIR": root + "/data", "BROKER_PROVIDERS_FILE": root + "/providers.json", "BROKER_API_KEY": apiKey,
            "FAKE_ACME_SECRET": clientSecret, "BROKER_REFRESH_INTERVAL": "0",
        ])
        let setup = Setup(
            broker: broker, provider: provider,
            environment: [
                "BROKER_URL": "http://127.0.0.1:\(broker.port)", "BROKER_API_KEY": apiKey, "PATH": "/usr/bin:/bin",
            ])
        #expect(await setup.connect())
        try await body(setup)
        broker.signal(SIGTERM)
        _ = await broker.waitForExit(timeout: 60)
    }

    @Test func listShowsTheAccountsForPeopleAndTheBrokersJSONWithJSON() async throws {
        try await Self.withBroker { s in
            let list = try await s.cli(["list"])
            #expect(list.status == 0 && list.stderr.isEmpty)
            let lines = list.stdout.split(separator: "\n")
            #expect(lines.first?.hasPrefix("ID") == true && lines.first?.contains("EXPIRES AT") == true)
            #expect(lines.count == 3 && lines[1].hasPrefix("acme:4242") && lines[1].contains("active") && lines[2] == "1 account")
            let json = try await s.cli(["list", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect((object?["accounts"] as? [[String: Any]])?.first?["id"] as? String == "acme:4242")
            #expect(try await s.cli(["list", "--provider", "github"]).stdout == "No accounts.\n")
            #expect(try await s.cli(["list", "--provider=acme"]).stdout.contains("acme:4242"))
            // A trailing slash on BROKER_URL is the same broker.
            #expect(try await s.cli(["list"], ["BROKER_URL": s.environment["BROKER_URL"]! + "/"]).status == 0)
        }
    }

    @Test func showPrintsTheTokenOnlyWithJSON() async throws {
        try await Self.withBroker { s in
            let show = try await s.cli(["show", "acme:4242"])
            #expect(show.status == 0)
            let rows = show.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            #expect(rows.contains(["provider", "acme"]) && rows.contains(["status", "active"]))
            #expect(rows.contains { $0.starts(with: ["access_token", "set"]) })
            #expect(!show.stdout.contains("SENTINEL"))
            let json = try await s.cli(["show", "--json", "acme:4242"])
            #expect(json.status == 0 && json.stdout.contains("\"access_token\":\"ACME-ACCESS-SENTINEL-"))
            #expect(!json.stdout.contains("REFRESH-SENTINEL"))
        }
    }

    @Test func refreshAsksTheProviderNow() async throws {
        try await Self.withBroker { s in
            let refresh = try await s.cli(["refresh", "acme:4242"])
            #expect(refresh.status == 0)
            #expect(refresh.stdout.hasPrefix("Refreshed acme:4242; the token now expires at "))
            #expect(s.provider.refreshCalls == 1)
            // Asked again at once: the first refresh's token, without another provider call; the JSON carries it.
            let json = try await s.cli(["refresh", "acme:4242", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect(object?["refreshed_at"] as? String != nil && object?["access_token"] as? String != nil)
            #expect(object?["refresh_token"] == nil && !json.stdout.contains("REFRESH-SENTINEL"))
            #expect(s.provider.refreshCalls == 1)
        }
    }

    @Test func deleteRevokesAndDeletesThenTheAccountIsGone() async throws {
        try await Self.withBroker { s in
            let delete = try await s.cli(["delete", "--yes", "acme:4242"])
            #expect(
                delete.status == 0
                    && delete.stdout
                        == "Deleted acme:4242. Revocation at the provider: done (or the provider has no revocation endpoint).\n"
            )
            #expect(s.provider.revokeCalls == 1)
            let again = try await s.cli(["delete", "acme:4242", "-y"])
            #expect(again.status == 1 && again.stdout.isEmpty)
            #expect(again.stderr.contains("DELETE /account?id=acme%3A4242") && again.stderr.contains("404 not_found: No such account."))
            #expect(try await s.cli(["list"]).stdout == "No accounts.\n")
            #expect(await s.connect())
            #expect(try await s.cli(["delete", "--json", "--yes", "acme:4242"]).stdout == "{\"id\":\"acme:4242\",\"deleted\":true}\n")
        }
    }

    @Test func aRefusedRequestExits1WithTheBrokersMessage() async throws {
        try await Self.withBroker(configure: { $0.refreshFailure = .rateLimited(retryAfter: "120") }) { s in
            let unknown = try await s.cli(["show", "acme:999"])
            #expect(unknown.status == 1 && unknown.stderr.contains("404 not_found: No such account."))
            let wrongKey = try await s.cli(["list"], ["BROKER_API_KEY": "not-the-key-0123456789"])
            #expect(wrongKey.status == 1 && wrongKey.stderr.contains("401 unauthorized: Missing or wrong credentials."))
            let limited = try await s.cli(["refresh", "acme:4242"])
            #expect(limited.status == 1 && limited.stderr.contains("502 upstream_error") && limited.stderr.contains("(try again in 120 s)"))
            #expect(!limited.stderr.contains(Self.apiKey))
        }
    }

    @Test func badSettingsExit2NamingTheVariableAndAnUnreachableBrokerIsNamed() async throws {
        try await Self.withBroker { s in
            let noKey = try await s.cli(["list"], ["BROKER_API_KEY": nil])
            #expect(noKey.status == 2 && noKey.stderr.contains("BROKER_API_KEY"))
            let badURL = try await s.cli(["list"], ["BROKER_URL": "ftp://broker.example"])
            #expect(badURL.status == 2 && badURL.stderr.contains("BROKER_URL"))
            let port = try LocalHTTPServer.listenOnLoopback(backlog: 1)
            close(port.descriptor)  // a port nobody listens on any more
            let gone = try await s.cli(["list"], ["BROKER_URL": "http://127.0.0.1:\(port.port)"])
            #expect(gone.status == 1)
            #expect(gone.stderr.contains("cannot reach the broker at http://127.0.0.1:\(port.port): connection refused"))
        }
        #expect(try AccountsClient.settings(["BROKER_API_KEY": Self.apiKey]).baseURL == "http://127.0.0.1:8080")
    }

    @Test func usageErrorsExit2AndHelpDoesNothingElse() async throws {
        try await Self.withBroker { s in
            for arguments in [[], ["show"], ["list", "extra"], ["list", "--bogus"], ["frob"], ["show", "a:1", "b:2"]] {
                let run = try await s.cli(arguments)
                #expect(run.status == 2, "\(arguments)")
                #expect(run.stderr.contains("usage: token-broker"), "\(arguments)")
            }
            let help = try await s.cli(["delete", "acme:4242", "--help"])
            #expect(help.status == 0 && help.stdout.hasPrefix("usage: token-broker accounts delete ID [--yes] [--json]"))
            #expect(help.stdout.contains("--yes") && help.stdout.contains("BROKER_URL") && !help.stdout.contains("restore"))
            let list = try await s.cli(["list", "-h"])
            #expect(list.status == 0 && list.stdout.hasPrefix("usage: token-broker accounts list [--provider P] [--json]"))
            #expect(await s.storedIDs().contains("acme:4242"))
            #expect(s.provider.revokeCalls == 0)
        }
    }

    @Test func listAndShowNameTheEndUserAndTags() async throws {
        try await Self.withBroker { s in
            #expect(try await s.connect(uid: "77", endUser: "user-42", tags: #"{"plan":"pro","env":"prod"}"#))
            let list = try await s.cli(["list"])
            #expect(list.status == 0)
            let lines = list.stdout.split(separator: "\n").map(String.init)
            let header = try #require(lines.first)
            #expect(header.contains("END USER") && header.contains("TAGS"))
            let tagged = try #require(lines.first { $0.hasPrefix("acme:77 ") })
            #expect(tagged.contains(" user-42 ") && tagged.contains(" env=prod,plan=pro "))
            let columns = { (line: String) in line.split(separator: " ").map(String.init) }
            #expect(columns(tagged).prefix(4) == ["acme:77", "active", "user-42", "env=prod,plan=pro"])
            let plain = try #require(lines.first { $0.hasPrefix("acme:4242 ") })
            #expect(columns(plain).prefix(4) == ["acme:4242", "active", "-", "-"])
            let show = try await s.cli(["show", "acme:77"])
            #expect(show.status == 0)
            let rows = show.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
            #expect(rows.contains(["end_user_id", "user-42"]) && rows.contains(["tags", "env=prod,plan=pro"]))
            #expect(rows.contains(["end_user_email", "-"]))
            let showPlain = try await s.cli(["show", "acme:4242"])
            let plainRows = showPlain.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            #expect(plainRows.contains(["end_user_id", "-"]) && plainRows.contains(["tags", "-"]))
        }
    }

    @Test func deleteAsksOnATerminalAndWithoutOneNeedsYes() async throws {
        try await Self.withBroker { s in
            // A script (stdin not a terminal) must say --yes: exit 2, nothing deleted, nothing revoked.
            let script = try await s.cli(["delete", "acme:4242"])
            #expect(script.status == 2 && script.stdout.isEmpty)
            #expect(
                script.stderr.contains("stdin is not a terminal: pass --yes to delete acme:4242")
                    && script.stderr.contains("Nothing was deleted"))
            #expect(await s.storedIDs().contains("acme:4242") && s.provider.revokeCalls == 0)
            // On a terminal it asks; anything but y keeps the account.
            let no = try PseudoTerminal()
            no.type("n\n")
            let declined = try await s.cli(["delete", "acme:4242"], stdin: no.terminal)
            #expect(declined.status == 1 && declined.stderr.contains("Delete acme:4242 and revoke its tokens at the provider?"))
            #expect(declined.stderr.contains("[y/N]") && declined.stderr.contains("acme:4242 was kept"))
            #expect(await s.storedIDs().contains("acme:4242") && s.provider.revokeCalls == 0)
            let ended = try PseudoTerminal()
            ended.type("\u{04}")  // end of input at once (Ctrl-D): no answer is no
            #expect(try await s.cli(["delete", "acme:4242"], stdin: ended.terminal).status == 1)
            let yes = try PseudoTerminal()
            yes.type("y\n")
            let confirmed = try await s.cli(["delete", "acme:4242"], stdin: yes.terminal)
            #expect(confirmed.status == 0 && confirmed.stdout.hasPrefix("Deleted acme:4242. Revocation at the provider: done"))
            #expect(!(await s.storedIDs().contains("acme:4242")) && s.provider.revokeCalls == 1)
        }
    }

    @Test func deleteSaysWhenTheProviderDidNotRevoke() async throws {
        try await Self.withBroker(configure: { $0.revokeFailure = .serviceUnavailable }) { s in
            let delete = try await s.cli(["delete", "acme:4242", "--yes"])
            #expect(delete.status == 0 && delete.stdout.hasPrefix("Deleted acme:4242 here. Revocation at the provider: FAILED ("))
            #expect(delete.stdout.contains("revoke the grant in the provider's settings") && !delete.stdout.contains("SENTINEL"))
            #expect(!(await s.storedIDs().contains("acme:4242")))
            #expect(await s.connect())
            let json = try await s.cli(["delete", "acme:4242", "--yes", "--json"])
            #expect(json.stdout.contains("\"revoked\":false") && json.stdout.contains("\"revoke_error\":"))
        }
    }
}
