/// Writes one flat JSON object (RFC 8259) straight into bytes, for bodies on hot paths.
///
/// Names are trusted literals; string values are escaped. Cheaper than building a
/// `String` piece by piece and converting it at the end.
public struct JSONObjectWriter: ~Copyable {
    private var bytes: ByteWriter
    private var empty = true

    /// Starts an object.
    public init(capacity: Int = 512) {
        bytes = ByteWriter(capacity: capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// Adds `"name":"value"`, or `"name":null` when `value` is nil.
    public mutating func string(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { JSONString.appendQuoted(value, to: &bytes) } else { bytes.append("null") }
    }

    /// Adds `"name":` followed by already-serialised JSON.
    public mutating func raw(_ name: StaticString, _ json: String) {
        key(name)
        bytes.append(string: json)
    }

    /// Adds `"name":` followed by whatever `write` appends (a value it serialises itself).
    public mutating func value(_ name: StaticString, _ write: (inout ByteWriter) -> Void) {
        key(name)
        write(&bytes)
    }

    /// Closes the object and returns its bytes.
    public mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes.bytes
    }

    /// Appends `,"name":` (no comma before the first) in one step.
    private mutating func key(_ name: StaticString) {
        let separator = empty ? 0 : 1
        empty = false
        name.withUTF8Buffer { name in
            bytes.write(atMost: name.count + 4) { p in
                p[0] = UInt8(ascii: ",")
                p[separator] = UInt8(ascii: "\"")
                if let start = name.baseAddress { (p + separator + 1).initialize(from: start, count: name.count) }
                p[separator + name.count + 1] = UInt8(ascii: "\"")
                p[separator + name.count + 2] = UInt8(ascii: ":")
                return separator + name.count + 3
            }
        }
    }
}
