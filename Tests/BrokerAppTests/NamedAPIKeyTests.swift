import BrokerCore
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// `BROKER_API_KEYS`: named keys checked at start, any of them valid at once (the rotation window), the caller's
/// key named in the access log, and no key ever printed.
@Suite(.scoped) struct NamedAPIKeyTests {
    static let old = "old-key-0123456789abcdef0123456789abcdef"
    static let new = "new-key-fedcba9876543210fedcba9876543210"

    @Test func readsNamedKeysBesideTheDefaultOne() throws {
        let c = try BrokerConfiguration.from(environment: [
            "BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_API_KEYS": "ci:\(Self.old), deploy.v2:\(Self.new)",
        ])
        #expect(c.callerKeys.map(\.name) == ["default", "ci", "deploy.v2"])
        #expect(c.callerKeys.map(\.key.value) == [BrokerHarness.apiKey, Self.old, Self.new])
    }

    @Test func refusesBadListsNamingTheVariableNeverTheKey() {
        let cases: [(String, [String: String])] = [
            ("short", ["BROKER_API_KEYS": "ci:short-key-SENTINEL"]),
            ("no colon", ["BROKER_API_KEYS": "ci" + Self.old]),
            ("bad name", ["BROKER_API_KEYS": "CI:\(Self.old)"]),
            ("long name", ["BROKER_API_KEYS": String(repeating: "n", count: 65) + ":\(Self.old)"]),
            ("empty name", ["BROKER_API_KEYS": ":\(Self.old)"]),
            ("twice", ["BROKER_API_KEYS": "ci:\(Self.old),ci:\(Self.new)"]),
            ("clash", ["BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_API_KEYS": "default:\(Self.old)"]),
        ]
        for (what, environment) in cases {
            #expect(throws: ConfigurationError.self, "\(what)") { try BrokerConfiguration.from(environment: environment) }
            do {
                _ = try BrokerConfiguration.from(environment: environment)
            } catch {
                #expect(error.variable == "BROKER_API_KEYS", "\(what)")
                let text = "\(error)"
                #expect(!text.contains(Self.old) && !text.contains(Self.new) && !text.contains("SENTINEL"), "\(what): \(text)")
            }
        }
        // Without BROKER_API_KEY, `default` is a name like any other.
        #expect((try? BrokerConfiguration.from(environment: ["BROKER_API_KEYS": "default:\(Self.old)"])) != nil)
    }

    /// An empty entry is a key lost in editing (a name and key deleted, a comma left behind): start-up is refused,
    /// naming the variable and the entry's position.
    @Test func refusesEmptyEntriesNamingTheirPosition() {
        let cases: [(list: String, position: Int)] = [
            ("ci:\(Self.old),,ops:\(Self.new)", 2),
            ("ci:\(Self.old),", 2),
            (",ci:\(Self.old)", 1),
            ("ci:\(Self.old), ,ops:\(Self.new)", 2),
            (",", 1),
        ]
        for (list, position) in cases {
            do {
                _ = try BrokerConfiguration.from(environment: ["BROKER_API_KEYS": list])
                Issue.record("\(list.count)-byte list with an empty entry \(position) was accepted")
            } catch {
                #expect(error.variable == "BROKER_API_KEYS")
                #expect("\(error)".contains("entry \(position) is empty"), "\(error)")
                #expect(!"\(error)".contains(Self.old) && !"\(error)".contains(Self.new))
            }
        }
        // A key with no bytes after its name is refused as too short, naming the key's name.
        #expect(throws: ConfigurationError(variable: "BROKER_API_KEYS", message: "the key named ci must be at least 32 bytes long")) {
            try BrokerConfiguration.from(environment: ["BROKER_API_KEYS": "ci:"])
        }
    }

    /// One key under two names would be attributed to the first name on every call: start-up is refused, naming
    /// both names, never the key.
    @Test func refusesOneKeyUnderTwoNamesNamingBoth() {
        let cases: [(environment: [String: String], message: String)] = [
            (
                ["BROKER_API_KEYS": "ci:\(Self.old),ops:\(Self.new),deploy:\(Self.old)"],
                "the keys named ci and deploy are the same key; give each key one name"
            ),
            (
                ["BROKER_API_KEY": Self.new, "BROKER_API_KEYS": "ci:\(Self.old),ops:\(Self.new)"],
                "the key named ops is BROKER_API_KEY's key (named default); give each key one name"
            ),
        ]
        for (environment, message) in cases {
            #expect(throws: ConfigurationError(variable: "BROKER_API_KEYS", message: message)) {
                try BrokerConfiguration.from(environment: environment)
            }
        }
        // The commands read the same list, with the same checks.
        #expect(throws: ConfigurationError.self) { try AccountsClient.settings(["BROKER_API_KEYS": "ci:\(Self.old),ops:\(Self.old)"]) }
    }

    @Test func theCommandsUseTheFirstNamedKeyWithoutTheDefaultOne() throws {
        #expect(try AccountsClient.settings(["BROKER_API_KEYS": "ci:\(Self.old),ops:\(Self.new)"]).apiKey.value == Self.old)
        #expect(
            try AccountsClient.settings(["BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_API_KEYS": "ci:\(Self.old)"]).apiKey.value
                == BrokerHarness.apiKey)
    }

    @Test func configCheckShowsKeyNamesOnly() throws {
        let c = try BrokerConfiguration.from(environment: [
            "BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_API_KEYS": "old:\(Self.old),new:\(Self.new)",
            "BROKER_AUDIT_LOG": "/var/log/broker-audit.jsonl",
        ])
        let report = ConfigCheck.report(c)
        #expect(report.contains("old,new") && report.contains("  set\n") && report.contains("/var/log/broker-audit.jsonl"))
        for key in [BrokerHarness.apiKey, Self.old, Self.new] { #expect(!report.contains(key)) }
    }

    /// The rotation window: while both keys are listed, callers holding either are served; a key not listed
    /// (the old one once removed, or any other) is refused; the log names the key, never shows it.
    @Test func everyListedKeyIsValidAtOnceAndLogsNameTheCaller() async throws {
        let harness = try BrokerHarness(
            providersJSON: "{\"providers\": {}}", environment: ["BROKER_API_KEYS": "old:\(Self.old),new:\(Self.new)"])
        for (key, status) in [(Self.old, 200), (Self.new, 200), (BrokerHarness.apiKey, 200), (Self.old + "x", 401), ("nope", 401)] {
            let reply = await TestHTTP.send(
                port: harness.port, target: "/accounts", headers: [("Authorization", "Bearer " + key), ("X-Request-Id", "rot-\(status)")])
            #expect(reply?.status == status, "\(key.prefix(8))")
        }
        // Every route that takes the API key takes each listed key.
        for target in ["/webhooks", "/app-token?provider=none"] {
            let reply = await TestHTTP.send(port: harness.port, target: target, headers: [("Authorization", "Bearer " + Self.new)])
            #expect(reply?.status != 401, "\(target)")
        }
        await harness.stop()
        let log = harness.log
        #expect(log.contains("\"caller\":\"old\"") && log.contains("\"caller\":\"new\"") && log.contains("\"caller\":\"default\""))
        #expect(log.contains("\"request_id\":\"rot-200\"") && log.contains("\"request_id\":\"rot-401\""))
        for key in [BrokerHarness.apiKey, Self.old, Self.new] { #expect(!log.contains(key)) }
    }

    /// A rolling deploy: replicas started before the rotation know the old key, those after it both, the last the new
    /// one only; a caller moved to the new key is served by every replica that lists it.
    @Test func aRollingDeployServesBothKeysUntilTheOldOneIsRemoved() async throws {
        let before = try BrokerHarness(providersJSON: "{\"providers\": {}}", environment: ["BROKER_API_KEYS": "old:\(Self.old)"])
        let during = try BrokerHarness(
            providersJSON: "{\"providers\": {}}", environment: ["BROKER_API_KEYS": "old:\(Self.old),new:\(Self.new)"])
        let after = try BrokerHarness(providersJSON: "{\"providers\": {}}", environment: ["BROKER_API_KEYS": "new:\(Self.new)"])
        func status(_ harness: BrokerHarness, _ key: String) async -> Int? {
            await TestHTTP.send(port: harness.port, target: "/accounts", headers: [("Authorization", "Bearer " + key)])?.status
        }
        let statuses = [
            await status(before, Self.old), await status(before, Self.new), await status(during, Self.old),
            await status(during, Self.new), await status(after, Self.old), await status(after, Self.new),
        ]
        #expect(statuses == [200, 401, 200, 200, 401, 200])
    }
}
