extension RESPValue {
    /// The bytes of a bulk or simple string; nil for any other reply, a nil bulk included.
    public var bytes: [UInt8]? {
        switch self {
        case .bulk(let bytes): return bytes
        case .simpleString(let text): return Array(text.utf8)
        case .error, .integer, .array: return nil
        }
    }

    /// The text of a bulk or simple string, with invalid UTF-8 repaired; nil for any other reply.
    public var string: String? {
        switch self {
        case .bulk(let bytes): return bytes.map { String(decoding: $0, as: UTF8.self) }
        case .simpleString(let text): return text
        case .error, .integer, .array: return nil
        }
    }

    /// The value of an integer reply; nil for any other reply.
    public var integer: Int? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The elements of an array reply; nil for a nil array or any other reply.
    public var array: [RESPValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The text of an error reply; nil for any other reply.
    public var errorMessage: String? {
        if case .error(let message) = self { return message }
        return nil
    }

    /// Whether this is the nil bulk string or the nil array.
    public var isNil: Bool {
        switch self {
        case .bulk(nil), .array(nil): return true
        case .bulk, .array, .simpleString, .error, .integer: return false
        }
    }
}
