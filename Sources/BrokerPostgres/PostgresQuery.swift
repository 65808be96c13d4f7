import BrokerCrypto

/// A parameter of a statement, sent in text format; the server infers its type from the statement.
public enum PostgresValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// Text, sent as its UTF-8 bytes.
    case text(String)
    /// Bytes for a `bytea` parameter, sent in the hex format `\x…` (use `$1::bytea` where the type is not implied).
    case bytea([UInt8])
    /// An integer, sent in decimal.
    case int(Int)
    /// A boolean, sent as `t` or `f`.
    case bool(Bool)

    /// The text-format bytes, nil for NULL.
    var textBytes: [UInt8]? {
        switch self {
        case .null: return nil
        case .text(let text): return Array(text.utf8)
        case .bytea(let bytes): return Array("\\x".utf8) + Array(Hex.encode(bytes).utf8)
        case .int(let value): return Array(String(value).utf8)
        case .bool(let value): return [value ? UInt8(ascii: "t") : UInt8(ascii: "f")]
        }
    }
}

/// A statement and its parameters (`$1`, `$2`, … in the SQL), run with the extended query protocol.
public struct PostgresQuery: Sendable, Hashable {
    /// The SQL text, one statement.
    public var sql: String
    /// The parameters, in order.
    public var parameters: [PostgresValue]

    /// Creates a query.
    public init(_ sql: String, _ parameters: [PostgresValue] = []) {
        self.sql = sql
        self.parameters = parameters
    }
}

/// What one statement returned: its column names, its rows in text format, and its command tag.
public struct PostgresRows: Sendable, Equatable {
    /// The column names, empty for a statement that returns no rows.
    public var columns: [String]
    /// The rows.
    public var rows: [PostgresRow]
    /// The command tag, such as `SELECT 2` or `INSERT 0 1`.
    public var commandTag: String

    /// The number of rows the command affected or returned, from the tag's last word (0 when it has none).
    public var affectedRows: Int {
        guard let last = commandTag.split(separator: " ").last else { return 0 }
        return Int(last) ?? 0
    }
}

/// One row of text-format values.
public struct PostgresRow: Sendable, Equatable {
    /// Each column's bytes in text format, nil for NULL.
    public var values: [[UInt8]?]

    /// The column's raw text bytes, nil for NULL or a column past the end.
    public subscript(_ index: Int) -> [UInt8]? {
        values.indices.contains(index) ? values[index] : nil
    }

    /// The column as text, nil for NULL.
    public func string(_ index: Int) -> String? {
        self[index].map { String(decoding: $0, as: UTF8.self) }
    }

    /// The column as an integer, nil for NULL or text that is not one.
    public func int(_ index: Int) -> Int? {
        string(index).flatMap { Int($0) }
    }

    /// The column as a boolean (`t` or `f`), nil otherwise.
    public func bool(_ index: Int) -> Bool? {
        switch string(index) {
        case "t": return true
        case "f": return false
        default: return nil
        }
    }

    /// The column as `bytea` in the hex output format (`\x…`, PostgreSQL's default since 9.0), nil for NULL or other text.
    public func bytea(_ index: Int) -> [UInt8]? {
        guard let raw = self[index], raw.count >= 2, raw[0] == UInt8(ascii: "\\"), raw[1] == UInt8(ascii: "x") else { return nil }
        return Hex.decode(String(decoding: raw[2...], as: UTF8.self))
    }
}
