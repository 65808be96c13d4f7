import BrokerCore
import BrokerFakeProviders
import Foundation
import Testing

@testable import BrokerApp

/// A misspelt variable is reported once at start-up with the name it was probably meant as, never silently ignored.
@Suite(.scoped) struct UnknownVariablesTests {
    @Test func typosAreFoundWithTheirClosestKnownNameAndOtherVariablesAreLeftAlone() {
        let found = UnknownVariables.find(in: [
            "BROKER_PROT": "8080", "BROKER_PORT": "8080", "GITHUB_CLIENTID": "x", "GITHUB_SHA": "abc", "HOME": "/root",
            "BROKER_SECRET_FILE": "/run/secrets/s", "BROKER_REDIS_TLS_CA_FILE": "/ca.pem", "BROKER_SOMETHING_ELSE_ENTIRELY": "1",
            "GITHUB_CLIENT_SECRET_FILE": "/run/secrets/g",
        ])
        #expect(found.map(\.name) == ["BROKER_PROT", "BROKER_SOMETHING_ELSE_ENTIRELY", "GITHUB_CLIENTID"])
        #expect(found.first { $0.name == "BROKER_PROT" }?.closest == "BROKER_PORT")
        #expect(found.first { $0.name == "GITHUB_CLIENTID" }?.closest == "GITHUB_CLIENT_ID")
        #expect(UnknownVariables.editDistance(Array("kitten".utf8), Array("sitting".utf8), limit: 5) == 3)
        #expect(UnknownVariables.editDistance(Array("".utf8), Array("ab".utf8), limit: 5) == 2)
    }

    /// The list is every `BROKER_*` name the code reads, so a new variable cannot be reported as unknown.
    @Test func theKnownListIsEveryVariableTheCodeReads() throws {
        let root = ConfigurationDocumentationTests.root
        var read: Set<String> = []
        let enumerator = FileManager.default.enumerator(atPath: root.appendingPathComponent("Sources").path)
        while let item = enumerator?.nextObject() as? String {
            guard item.hasSuffix(".swift"), !item.hasSuffix("UnknownVariables.swift") else { continue }
            let text = try String(contentsOf: root.appendingPathComponent("Sources/" + item), encoding: .utf8)
            read.formUnion(ConfigurationDocumentationTests.names(in: text, quoted: true).filter { $0.hasPrefix("BROKER_") })
        }
        #expect(read.subtracting(UnknownVariables.broker).sorted() == [], "read by the code but not in UnknownVariables.broker")
        #expect(UnknownVariables.broker.subtracting(read).sorted() == [], "listed but read nowhere")
    }

    @Test func theBrokerSaysSoOnceAtStart() async throws {
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {}}", environment: ["BROKER_PROT": "8080", "BROKER_WEBHOOK_URLS": "x"])
        let log = broker.log
        let lines = log.split(separator: "\n").filter { $0.contains("unknown variable ignored") }
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.contains { $0.contains("\"variable\":\"BROKER_PROT\"") && $0.contains("\"did_you_mean\":\"BROKER_PORT\"") })
        #expect(
            lines.contains { $0.contains("\"variable\":\"BROKER_WEBHOOK_URLS\"") && $0.contains("\"did_you_mean\":\"BROKER_WEBHOOK_URL\"") }
        )
        #expect(!log.contains("8080\"") || !lines.contains { $0.contains("8080") })
    }
}
