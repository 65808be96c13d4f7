import Foundation
import Testing

/// Every variable the code reads is documented in docs/configuration.md and .env.example, and nothing documented there is never read.
struct ConfigurationDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let pattern = try! NSRegularExpression(pattern: "(BROKER|WEIBO|GITHUB|GOOGLE|TWITTER|TMDB)_[A-Z_]*[A-Z]")

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
                      text[text.index(before: name.lowerBound)] == "\"", text[name.upperBound] == "\"" else { continue }
            }
            found.insert(String(text[name]))
        }
        return found
    }

    static func read() throws -> Set<String> {
        var found: Set<String> = []
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
        #expect(code.contains("BROKER_PORT") && code.contains("BROKER_STORE"))
        let documented = Self.names(in: try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8), quoted: false)
        #expect(code.subtracting(documented).sorted() == [], "read by the code but missing from \(file)")
        #expect(documented.subtracting(code).sorted() == [], "in \(file) but never read")
    }
}
