import Foundation

/// The back end's free JSON object on an account (`PATCH /account`'s `metadata`): checked where it enters, kept as
/// its compact text, and read back as a ``JSONValue`` for answers and webhooks.
public enum AccountMetadata {
    /// The most bytes of the object's compact JSON text: 16 KB, room for labels and ids, not for documents.
    public static let maximumBytes = 16 * 1024

    /// Why `object` cannot be an account's metadata, or its compact text (keys sorted) when it can; an empty object
    /// gives nil text (the account holds no metadata).
    public static func text(of object: Any) -> Result<String?, MetadataError> {
        guard let dictionary = object as? [String: Any] else { return .failure(.notAnObject) }
        if dictionary.isEmpty { return .success(nil) }
        // Written from the typed value, not by JSONSerialization, which writes a JSON `true` back as `1` on Linux.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(JSONValue(dictionary)) else { return .failure(.notAnObject) }
        guard data.count <= maximumBytes else { return .failure(.tooLarge(data.count)) }
        return .success(String(decoding: data, as: UTF8.self))
    }

    /// The stored text as a JSON value; nil when absent or (never written so) not a JSON object.
    public static func value(of text: String?) -> JSONValue? {
        guard let text, let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)), object is [String: Any] else {
            return nil
        }
        return JSONValue(object)
    }

    /// Why a `metadata` member was refused.
    public enum MetadataError: Error, Sendable, Equatable {
        /// It is not a JSON object.
        case notAnObject
        /// Its compact JSON has this many bytes, more than ``AccountMetadata/maximumBytes``.
        case tooLarge(Int)

        /// A sentence for the error body.
        public var message: String {
            switch self {
            case .notAnObject: "metadata must be a JSON object"
            case .tooLarge(let bytes):
                "metadata is \(bytes) bytes of JSON; at most \(AccountMetadata.maximumBytes) (16 KB) are allowed"
            }
        }
    }
}

/// A JSON value as `JSONSerialization` reads it, typed so that `Encodable` can write it again (webhook bodies).
public indirect enum JSONValue: Sendable, Equatable, Encodable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer that fits 64 bits.
    case integer(Int64)
    /// Any other number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; keys sorted when written.
    case object([String: JSONValue])

    /// The value of what `JSONSerialization` returned.
    public init(_ any: Any) {
        if let flag = JSONBoolean.value(any) {
            self = .bool(flag)
        } else if let number = JSONBoolean.number(any) {
            let double = number.doubleValue
            if double == double.rounded(), abs(double) < 9.0e15 { self = .integer(number.int64Value) } else { self = .number(double) }
        } else if let text = any as? String {
            self = .string(text)
        } else if let list = any as? [Any] {
            self = .array(list.map(JSONValue.init))
        } else if let object = any as? [String: Any] {
            self = .object(object.mapValues(JSONValue.init))
        } else {
            self = .null
        }
    }

    /// Writes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let flag):
            var container = encoder.singleValueContainer()
            try container.encode(flag)
        case .integer(let number):
            var container = encoder.singleValueContainer()
            try container.encode(number)
        case .number(let number):
            var container = encoder.singleValueContainer()
            try container.encode(number)
        case .string(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .array(let list):
            var container = encoder.unkeyedContainer()
            for item in list { try container.encode(item) }
        case .object(let members):
            var container = encoder.container(keyedBy: Key.self)
            for (name, value) in members { try container.encode(value, forKey: Key(name)) }
        }
    }

    /// Any member name.
    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
