import Foundation

/// Shared JSON encoding and decoding for stored records, with error reasons that never quote stored values.
enum JSONRecord {
    /// Pretty-printed JSON with sorted keys and unescaped slashes, ending in a newline.
    ///
    /// Records hold only strings and integers, which always encode; should the
    /// encoder refuse anyway, the store reports ``StoreError/unavailable(_:)``
    /// naming the error's type, never a value.
    static func encode(_ value: some Encodable) throws(StoreError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            var bytes = [UInt8](try encoder.encode(value))
            bytes.append(0x0A)
            return bytes
        } catch {
            throw .unavailable("encode record: \(type(of: error))")
        }
    }

    /// The value in `bytes`, or ``StoreError/corrupt(path:reason:)`` naming `path` and what is wrong.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], path: String) throws(StoreError) -> T {
        guard !bytes.isEmpty else { throw .corrupt(path: path, reason: "the file is empty") }
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch let error as DecodingError {
            throw .corrupt(path: path, reason: reason(for: error))
        } catch {
            throw .corrupt(path: path, reason: "not a valid record")
        }
    }

    /// The date in an optional RFC 3339 field, or a corrupt-record error naming the field.
    static func date(_ text: String?, field: String, path: String) throws(StoreError) -> Date? {
        guard let text else { return nil }
        guard let date = RFC3339Date.parse(text) else {
            throw .corrupt(path: path, reason: "field \"\(field)\" is not an RFC 3339 date-time")
        }
        return date
    }

    /// The date in a required RFC 3339 field, or a corrupt-record error naming the field.
    static func date(_ text: String, field: String, path: String) throws(StoreError) -> Date {
        guard let date = RFC3339Date.parse(text) else {
            throw .corrupt(path: path, reason: "field \"\(field)\" is not an RFC 3339 date-time")
        }
        return date
    }

    /// A reason built from the error's kind and key path only, so no stored (possibly secret) value leaks.
    private static func reason(for error: DecodingError) -> String {
        func field(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "the top level" : "field \"" + path.map(\.stringValue).joined(separator: ".") + "\""
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing field \"" + (context.codingPath + [key]).map(\.stringValue).joined(separator: ".") + "\""
        case .typeMismatch(_, let context):
            return "\(field(context.codingPath)) has the wrong type"
        case .valueNotFound(_, let context):
            return "\(field(context.codingPath)) is null"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON (truncated or damaged)" : "\(field(context.codingPath)) is malformed"
        @unknown default:
            return "not a valid record"
        }
    }
}
