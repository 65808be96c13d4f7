/// Compact JSON (RFC 8259) written straight into bytes, as `JSONEncoder` with `.sortedKeys` and
/// `.withoutEscapingSlashes` writes it, for records written on every sign-in.
///
/// Callers write an object's members in sorted key order themselves; string values are escaped as the encoder
/// escapes them (§7: quote, backslash and control characters; `/` and everything from U+007F on left as they are).
package struct JSONBytes {
    /// The bytes written so far.
    package private(set) var bytes: [UInt8]
    /// Whether the object being written has no member yet.
    private var empty = true

    /// An empty buffer with room for `capacity` bytes.
    package init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Opens an object.
    package mutating func open() {
        bytes.append(UInt8(ascii: "{"))
        empty = true
    }

    /// Closes the innermost object.
    package mutating func close() {
        bytes.append(UInt8(ascii: "}"))
        empty = false
    }

    /// Writes the name of the next member, `"name":`; `name` is a literal that needs no escaping.
    package mutating func key(_ name: StaticString) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: "\":".utf8)
    }

    /// Writes `"name":"value"`, or nothing when `value` is nil (as the encoder leaves an absent optional out).
    package mutating func string(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        Self.appendQuoted(value, to: &bytes)
    }

    /// Writes `"name":value`.
    package mutating func integer(_ name: StaticString, _ value: Int) {
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Writes `"name":{…}` with the members of `fields` in the byte order of their names, or nothing when nil.
    package mutating func strings(_ name: StaticString, _ fields: [String: String]?) {
        guard let fields else { return }
        key(name)
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (field, value) in fields.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            Self.appendQuoted(field, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            Self.appendQuoted(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Writes `"name":["…",…]`, or nothing when nil.
    package mutating func array(_ name: StaticString, _ values: [String]?) {
        guard let values else { return }
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            Self.appendQuoted(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Appends a newline.
    package mutating func newline() {
        bytes.append(0x0A)
    }

    /// Appends `text` as a JSON string, quotes included, escaped as `JSONEncoder` escapes it.
    package static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                out.append(contentsOf: utf8[start..<index])
                start = index + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: "u00".utf8)
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0x0F)])
                }
            }
            out.append(contentsOf: utf8[start...])
        }
        out.append(UInt8(ascii: "\""))
    }
}
