import BrokerCrypto
import Foundation

/// A provider's response body, sniffed rather than trusted by content type.
///
/// Weibo sends JSON as `text/plain`, and GitHub's form-encoded default has been
/// seen labelled `application/json`, so the first byte decides how to read it.
struct ResponseBody {
    /// What reading the body produced.
    enum Parsed {
        /// A JSON object, or a form body read as one.
        case object([String: Any])
        /// Valid JSON that is an array, string, number or null.
        case notAnObject
        /// Starts like JSON but does not parse.
        case invalidJSON
        /// Neither JSON nor (where allowed) a form body, e.g. an HTML error page.
        case notJSON
    }

    private let bytes: [UInt8]

    /// Wraps the raw bytes.
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether the body is empty or only whitespace.
    var isBlank: Bool {
        bytes.allSatisfy(Self.isWhitespace)
    }

    /// Reads the body as JSON when it starts with `{` or `[`, else as a form body when `acceptForm` and it looks like one.
    func parse(acceptForm: Bool) -> Parsed {
        guard let first = bytes.first(where: { !Self.isWhitespace($0) }) else { return .notJSON }
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
            guard let value = try? JSONSerialization.jsonObject(with: Data(bytes), options: []) else { return .invalidJSON }
            guard let object = value as? [String: Any] else { return .notAnObject }
            return .object(object)
        }
        if acceptForm, let form = formFields() { return .object(form) }
        return .notJSON
    }

    /// The body's fields when it reads as an object either way, else nil.
    func fields(acceptForm: Bool) -> [String: Any]? {
        if case .object(let object) = parse(acceptForm: acceptForm) { return object }
        return nil
    }

    /// The body as `application/x-www-form-urlencoded` fields, or nil unless every pair is `name=value` with a plain name.
    private func formFields() -> [String: Any]? {
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "<") && $0 != UInt8(ascii: "\"") }) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        let rawPairs = text.split(separator: "&", omittingEmptySubsequences: true)
        guard !rawPairs.isEmpty,
            rawPairs.allSatisfy({ pair in
                guard let equals = pair.firstIndex(of: "=") else { return false }
                let name = pair[..<equals]
                return !name.isEmpty
                    && name.unicodeScalars.allSatisfy {
                        $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "." || $0 == "-"
                    }
            })
        else { return nil }
        let pairs = PercentEncoding.parseForm(text)
        guard pairs.count == rawPairs.count else { return nil }
        var fields: [String: Any] = [:]
        for (name, value) in pairs where fields[name] == nil {
            fields[name] = value
        }
        return fields
    }

    /// JSON whitespace (RFC 8259 §2).
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
