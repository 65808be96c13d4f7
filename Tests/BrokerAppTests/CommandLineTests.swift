import BrokerTestSupport
import Foundation
import Glibc
import Testing

@testable import BrokerApp

/// The command line: help never does anything else, unknown flags and arguments are refused, the healthcheck says why.
@Suite(.scoped) struct CommandLineTests {
    @Test(arguments: [
        ([], BrokerCommand.serve), (["serve"], .serve), (["healthcheck"], .healthcheck), (["rekey"], .rekey(dryRun: false)),
        (["rekey", "--dry-run"], .rekey(dryRun: true)), (["accounts", "list"], .accounts(AccountsCommand(.list(provider: nil)))),
        (["accounts", "list", "--json", "--provider", "acme"], .accounts(AccountsCommand(.list(provider: "acme"), json: true))),
        (["accounts", "list", "--provider=acme"], .accounts(AccountsCommand(.list(provider: "acme")))),
        (["accounts", "show", "acme:1"], .accounts(AccountsCommand(.show("acme:1")))),
        (["accounts", "delete", "--json", "acme:1"], .accounts(AccountsCommand(.delete("acme:1"), json: true))),
        (["accounts", "refresh", "acme:1", "--json"], .accounts(AccountsCommand(.refresh("acme:1"), json: true))),
        (["accounts", "delete", "acme:1", "--help"], .help("accounts delete")), (["help", "accounts"], .help("accounts")),
        (["help", "accounts", "delete"], .help("accounts delete")), (["accounts", "--help", "list"], .help("accounts list")),
        (["accounts", "delete", "--yes", "acme:1"], .accounts(AccountsCommand(.delete("acme:1"), yes: true))),
        (["accounts", "delete", "acme:1", "-y", "--json"], .accounts(AccountsCommand(.delete("acme:1"), json: true, yes: true))),
        (["webhooks", "replay", "-h"], .help("webhooks replay")), (["config", "check", "--help"], .help("config check")),
        (["version"], .version), (["--version"], .version), (["help"], .help(nil)), (["help", "rekey"], .help("rekey")),
        (["--help"], .help(nil)), (["-h"], .help(nil)), (["rekey", "--help"], .help("rekey")), (["serve", "-h"], .help("serve")),
        (["rekey", "--bogus", "--help"], .help("rekey")), (["config", "check"], .configCheck),
        (["webhooks", "list"], .webhooks(.list)), (["webhooks", "replay", "evt_ab.0"], .webhooks(.replay("evt_ab.0"))),
        (["webhooks", "--help"], .help("webhooks")), (["backup"], .backup(json: false)), (["backup", "--json"], .backup(json: true)),
        (["restore", "b.jsonl"], .restore(RestoreCommand(file: "b.jsonl"))),
        (
            ["restore", "--force", "--data-dir", "/d", "b.jsonl"],
            .restore(RestoreCommand(file: "b.jsonl", dataDirectory: "/d", force: true))
        ),
        (["restore", "b.jsonl", "--data-dir=/d"], .restore(RestoreCommand(file: "b.jsonl", dataDirectory: "/d"))),
        (["restore", "b.jsonl", "--force", "--help"], .help("restore")), (["help", "backup"], .help("backup")),
    ])
    func commandsParse(arguments: [String], expected: BrokerCommand) throws {
        #expect(try BrokerCommand.parse(arguments).get() == expected)
    }

    @Test(arguments: [
        (["bogus"], "unknown command \"bogus\""), (["--bogus"], "unknown flag \"--bogus\""),
        (["rekey", "--dry"], "unknown flag \"--dry\""), (["serve", "now"], "unexpected argument \"now\""),
        (["help", "bogus"], "unknown command \"bogus\""), (["version", "2"], "unexpected argument \"2\""),
        (["config"], "config needs a sub-command: config check"), (["config", "show"], "unexpected argument \"show\""),
        (["config", "check", "now"], "unexpected argument \"now\""),
        (["webhooks"], "webhooks needs a sub-command: webhooks list or webhooks replay ID"),
        (["webhooks", "show"], "unexpected argument \"show\""), (["webhooks", "list", "all"], "unexpected argument \"all\""),
        (["webhooks", "replay"], "webhooks replay needs the delivery or event id"),
        (["webhooks", "replay", "a", "b"], "unexpected argument \"b\""),
        (["rekey", "--dry-run", "now"], "unexpected argument \"now\""),
        (["accounts"], "accounts needs a sub-command: accounts list, show ID, delete ID or refresh ID"),
        (["accounts", "frob"], "unknown command \"accounts frob\""), (["accounts", "--json"], "unknown flag \"--json\""),
        (["accounts", "show"], "accounts show needs an account id (provider:uid)"),
        (["accounts", "delete", "--json"], "accounts delete needs an account id (provider:uid)"),
        (["accounts", "show", "a:1", "b:2"], "unexpected argument \"b:2\""),
        (["accounts", "list", "acme"], "unexpected argument \"acme\""),
        (["accounts", "list", "--bogus"], "unknown flag \"--bogus\""),
        (["accounts", "list", "--provider"], "--provider needs a provider name"),
        (["accounts", "list", "--provider", "--json"], "--provider needs a provider name"),
        (["accounts", "show", "--provider", "acme"], "unknown flag \"--provider\""),
        (["backup", "now"], "unexpected argument \"now\""), (["backup", "--force"], "unknown flag \"--force\""),
        (["restore"], "restore needs the backup file: restore FILE [--data-dir DIR] [--force]"),
        (["restore", "--force"], "restore needs the backup file: restore FILE [--data-dir DIR] [--force]"),
        (["restore", "a.jsonl", "b.jsonl"], "unexpected argument \"b.jsonl\""),
        (["restore", "a.jsonl", "--data-dir"], "--data-dir needs a directory"),
        (["restore", "a.jsonl", "--data-dir", "--force"], "--data-dir needs a directory"),
        (["restore", "a.jsonl", "--yes"], "unknown flag \"--yes\""),
        (["accounts", "show", "a:1", "--yes"], "unknown flag \"--yes\""), (["help", "accounts", "frob"], "unexpected argument \"frob\""),
        (["help", "rekey", "now"], "unexpected argument \"now\""),
    ])
    func unknownCommandsFlagsAndExtraArgumentsAreRefused(arguments: [String], message: String) {
        #expect(throws: BrokerCommand.UsageError(description: message)) { try BrokerCommand.parse(arguments).get() }
    }

    @Test func helpAfterRekeyPrintsHelpAndTouchesNoDataDirectory() async throws {
        let directory = NSTemporaryDirectory() + "cli-help-" + UUID().uuidString
        // An environment that would fail to configure: help must not read it.
        let environment = ["BROKER_DATA_DIR": directory, "BROKER_PORT": "not-a-port"]
        for arguments in [["rekey", "--help"], ["serve", "--help"], ["-h"]] {
            let (status, stderr) = try await runBroker(arguments, environment: environment)
            #expect(status == 0, "\(arguments): \(stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory))
        let (status, stderr) = try await runBroker(["serve", "--bogus"], environment: environment)
        #expect(status == 2)
        #expect(stderr.contains("unknown flag \"--bogus\"") && stderr.contains("usage: token-broker"))
    }

    /// Each command's `--help` is its own usage: its synopsis first, then each option it takes, and nothing of the
    /// other commands; it needs no configuration.
    @Test(arguments: [
        (["serve"], "usage: token-broker [serve]", [String]()), (["demo"], "usage: token-broker demo", ["BROKER_DEMO_PORT"]),
        (["healthcheck"], "usage: token-broker healthcheck", []), (["rekey"], "usage: token-broker rekey [--dry-run]", ["--dry-run"]),
        (["config", "check"], "usage: token-broker config check", []),
        (["accounts"], "usage: token-broker accounts list [--provider P] [--json]", ["delete ID [--yes]", "--json"]),
        (["accounts", "list"], "usage: token-broker accounts list [--provider P] [--json]", ["--provider P", "--json"]),
        (["accounts", "show", "a:1"], "usage: token-broker accounts show ID [--json]", ["--json", "BROKER_URL"]),
        (["accounts", "delete"], "usage: token-broker accounts delete ID [--yes] [--json]", ["--yes", "y/N"]),
        (["accounts", "refresh"], "usage: token-broker accounts refresh ID [--json]", ["--json"]),
        (["backup"], "usage: token-broker backup [--json]", ["--json", "BROKER_URL"]),
        (["restore"], "usage: token-broker restore FILE [--data-dir DIR] [--force]", ["--data-dir DIR", "--force", "encryption"]),
        (["webhooks", "list"], "usage: token-broker webhooks list", ["replay ID", "BROKER_URL"]),
        (["version"], "usage: token-broker version", []),
    ])
    func eachCommandsHelpIsItsOwn(command: [String], synopsis: String, mentions: [String]) async throws {
        for flag in ["--help", "-h"] {
            let run = try await runBrokerCapturingOutput(command + [flag], environment: ["BROKER_PORT": "not-a-port"])
            #expect(run.status == 0 && run.stderr.isEmpty, "\(command) \(flag): \(run.stderr)")
            #expect(run.stdout.hasPrefix(synopsis + "\n") || run.stdout.hasPrefix(synopsis + " "), "\(command): \(run.stdout)")
            for text in mentions { #expect(run.stdout.contains(text), "\(command) lacks \(text)") }
            #expect(run.stdout != BrokerCommand.usage + "\n" && !run.stdout.contains("print this text"))
        }
        let named = try await runBrokerCapturingOutput(["help"] + command.prefix(2).filter { !$0.contains(":") }, environment: [:])
        #expect(named.status == 0 && named.stdout.hasPrefix(synopsis))
    }

    @Test func aFailedHealthcheckSaysWhy() async throws {
        let port = try LocalHTTPServer.listenOnLoopback(backlog: 1)
        close(port.descriptor)  // a port nobody listens on any more
        let (status, stderr) = try await runBroker(
            ["healthcheck"], environment: ["BROKER_PORT": String(port.port), "BROKER_HOST": "127.0.0.1"])
        #expect(status == 1)
        #expect(stderr.contains("cannot connect to 127.0.0.1:\(port.port)"))
    }

    @Test func configCheckShowsTheResolvedSettingsAndNoSecret() throws {
        let secret = "api-key-SENTINEL-0123456789"
        let configuration = try BrokerConfiguration.from(environment: [
            "BROKER_API_KEY": secret, "BROKER_PUBLIC_URL": "https://broker.example/base", "GITHUB_CLIENT_ID": "id",
        ])
        let report = ConfigCheck.report(configuration)
        #expect(report.contains("BROKER_API_KEY") && report.contains("  set\n"))
        #expect(report.contains("https://broker.example/base/callback"))
        #expect(report.contains("provider github") && report.contains("not configured (set GITHUB_CLIENT_SECRET)"))
        #expect(!report.contains("SENTINEL"))
        #expect(throws: ConfigurationError.self) { try BrokerConfiguration.from(environment: ["BROKER_ENCRYPTION_KEY": "not base64"]) }
    }

    @Test func withJSONLogsEveryStartUpErrorIsAJSONLine() async throws {
        for arguments in [["serve"], ["--bogus"], ["config", "check"]] {
            let (status, stderr) = try await runBroker(arguments, environment: ["BROKER_LOG_FORMAT": "json", "BROKER_PORT": "not-a-port"])
            #expect(status == 2)
            let lines = stderr.split(separator: "\n")
            #expect(!lines.isEmpty)
            for line in lines {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object?["level"] as? String == "error", "\(line)")
            }
        }
    }
}
