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
        bytes.append(json)
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

    private mutating func key(_ name: StaticString) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        bytes.append(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }
}
