import BrokerCore
import Foundation
import Testing

/// Every variable the code reads is documented in docs/configuration.md and .env.example, and nothing documented there is never read.
///
/// The code's variables are the `BROKER_…` names it quotes and every variable a
/// preset reads (``ProviderPresets/environmentVariables``). A document may name
/// the catalogue's credentials once as `<NAME>_CLIENT_ID` and `<NAME>_CLIENT_SECRET`
/// followed, on the same line, by each `NAME` in backticks; that line documents
/// each name it lists, and only those.
struct ConfigurationDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The prefixes of the variables the broker reads: its own and each preset's.
    static let prefixes = ["BROKER"] + Set(ProviderPresets.environmentVariables.map { String($0.prefix { $0 != "_" }) }).sorted()
    static let pattern = try! NSRegularExpression(pattern: "(" + prefixes.joined(separator: "|") + ")_[A-Z0-9_]*[A-Z0-9]")

    /// The variable names in `text`; with `quoted`, only those written as Swift string literals (`"BROKER_PORT"`).
    static func names(in text: String, quoted: Bool) -> Set<String> {
        let range = NSRange(text.startIndex..., in: text)
        var found: Set<String> = []
        for match in pattern.matches(in: text, range: range) {
            guard let name = Range(match.range, in: text) else { continue }
            // `BROKER_MAX_*` names a group; `${WEIBO_SECRET}` is a providers-file reference, not a setting.
            let after = text[name.upperBound...].prefix(2), before = text[..<name.lowerBound].suffix(2)
            if after.hasPrefix("_*") || before == "${" { continue }
            if quoted {
                guard name.lowerBound > text.startIndex, name.upperBound < text.endIndex,
                    text[text.index(before: name.lowerBound)] == "\"", text[name.upperBound] == "\""
                else { continue }
            }
            found.insert(String(text[name]))
        }
        return found.union(quoted ? [] : patternNames(in: text))
    }

    /// The names a `<NAME>_SUFFIX` line documents: each suffix it uses with each `` `NAME` `` it lists.
    static func patternNames(in text: String) -> Set<String> {
        var found: Set<String> = []
        for line in text.split(separator: "\n") where line.contains("<NAME>_") {
            let suffixes = line.components(separatedBy: "<NAME>_").dropFirst().map { $0.prefix { $0.isUppercase || $0 == "_" } }
            let listed = line.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
                .filter { !$0.isEmpty && $0.allSatisfy { $0.isUppercase && $0.isASCII } }
            for name in listed { for suffix in suffixes { found.insert(name + "_" + suffix) } }
        }
        return found
    }

    /// The `BROKER_…` variables a script under scripts/ reads (`$BROKER_BIN`, `${BROKER_BIN:-…}`).
    static func readByScripts() throws -> Set<String> {
        let expansion = try NSRegularExpression(pattern: "\\$\\{?(BROKER_[A-Z0-9_]*[A-Z0-9])")
        var found: Set<String> = []
        let scripts = root.appendingPathComponent("scripts")
        let enumerator = FileManager.default.enumerator(atPath: scripts.path)
        while let item = enumerator?.nextObject() as? String {
            guard let text = try? String(contentsOf: scripts.appendingPathComponent(item), encoding: .utf8) else { continue }
            for match in expansion.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                if let name = Range(match.range(at: 1), in: text) { found.insert(String(text[name])) }
            }
        }
        return found
    }

    static func read() throws -> Set<String> {
        var found = Set(ProviderPresets.environmentVariables)
        let enumerator = FileManager.default.enumerator(atPath: root.appendingPathComponent("Sources").path)
        while let item = enumerator?.nextObject() as? String {
            guard item.hasSuffix(".swift") else { continue }
            let text = try String(contentsOf: root.appendingPathComponent("Sources/" + item), encoding: .utf8)
            found.formUnion(names(in: text, quoted: true))
        }
        return found
    }

    @Test(arguments: ["docs/configuration.md", ".env.example"])
    func everyVariableTheCodeReadsIsDocumented(file: String) throws {
        let code = try Self.read()
        #expect(code.contains("BROKER_PORT") && code.contains("BROKER_STORE") && code.contains("SLACK_CLIENT_SECRET"))
        let documented = Self.names(in: try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8), quoted: false)
        #expect(code.subtracting(documented).sorted() == [], "read by the code but missing from \(file)")
        #expect(documented.subtracting(code).sorted() == [], "in \(file) but never read")
    }

    /// The other documents (deployment.md's environment table among them) name no variable the broker does not read:
    /// they point to configuration.md for the whole list and must not contradict it with a name of their own.
    @Test(arguments: [
        "docs/deployment.md", "docs/operations.md", "docs/webhooks.md", "docs/providers.md", "docs/api.md",
        "docs/architecture.md", "docs/app-tokens.md", "docs/performance.md", "docs/testing.md", "README.md", "SECURITY.md",
    ])
    func everyVariableAnotherDocumentNamesIsRead(file: String) throws {
        // The test and benchmark scripts' own variables (`BROKER_BIN`, the binary under test) are read too: by scripts/.
        let code = try Self.read().union(Self.readByScripts())
        let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
        // A secret given as a file is its variable's name plus `_FILE` (configuration.md, "Secrets from files").
        let unread = Self.names(in: text, quoted: false).subtracting(code).filter { name in
            !(name.hasSuffix("_FILE") && code.contains(String(name.dropLast("_FILE".count))))
        }
        #expect(unread.sorted() == [], "in \(file) but never read")
    }

    /// deployment.md's environment table names only variables that configuration.md's table documents.
    @Test func deploymentsEnvironmentTableIsASubsetOfConfiguration() throws {
        let deployment = try String(contentsOf: Self.root.appendingPathComponent("docs/deployment.md"), encoding: .utf8)
        let configuration = try String(contentsOf: Self.root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        let section = try #require(
            deployment.components(separatedBy: "## Environment").dropFirst().first?.components(separatedBy: "\n## ").first)
        let rows = section.split(separator: "\n").filter { $0.hasPrefix("| `") }.map(String.init)
        #expect(!rows.isEmpty)
        let tabled = Self.names(in: rows.joined(separator: "\n"), quoted: false)
        #expect(tabled.contains("BROKER_API_KEYS") && tabled.contains("BROKER_API_KEY"))
        #expect(tabled.subtracting(Self.names(in: configuration, quoted: false)).sorted() == [])
    }

    @Test func aPatternLineDocumentsExactlyTheNamesItLists() {
        let line = "| `<NAME>_CLIENT_ID`, `<NAME>_CLIENT_SECRET` | unset | `<NAME>` one of `ASANA`, `ZOOM` |"
        #expect(Self.patternNames(in: line) == ["ASANA_CLIENT_ID", "ASANA_CLIENT_SECRET", "ZOOM_CLIENT_ID", "ZOOM_CLIENT_SECRET"])
        #expect(Self.patternNames(in: "`ASANA_CLIENT_ID` and `ZOOM`") == [])
    }
}
