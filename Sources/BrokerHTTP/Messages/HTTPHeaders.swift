import Glibc

/// An ordered list of header fields that keeps repeats and compares names case-insensitively.
///
/// RFC 9110 §5.1: field names are case-insensitive; RFC 9110 §5.3: order of
/// repeated fields matters, so nothing is merged or reordered here.
public struct HTTPHeaders: Sendable, Sequence {
    /// The fields in the order they were received or added.
    public private(set) var fields: [(name: String, value: String)]

    /// Creates a header list, empty or from name/value pairs in order.
    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
    }

    /// A copy of `headers` with room for `extra` more fields: a list shared by many responses, about to be added to,
    /// is copied once here rather than copied and then grown by the first ``add(name:value:)``.
    public init(_ headers: HTTPHeaders, reservingRoomFor extra: Int) {
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(headers.fields.count + extra)
        fields.append(contentsOf: headers.fields)
        self.fields = fields
    }

    /// The number of fields, repeats included.
    public var count: Int { fields.count }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func add(name: String, value: String) {
        fields.append((name, value))
    }

    /// Replaces every field of this name by one field with this value.
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        fields.append((name, value))
    }

    /// Removes every field of this name.
    public mutating func remove(name: String) {
        fields.removeAll { Self.equalsIgnoringCase($0.name, name) }
    }

    /// The value of the first field with this name, if any.
    public subscript(name: String) -> String? {
        // By index: each field's name is compared where it lies, not copied out with its value (two retains and
        // two releases per field) as a `for field in fields` loop does.
        for index in fields.indices where Self.equalsIgnoringCase(fields[index].name, name) {
            return fields[index].value
        }
        return nil
    }

    /// Every value of fields with this name, in order.
    public func values(for name: String) -> [String] {
        fields.compactMap { Self.equalsIgnoringCase($0.name, name) ? $0.value : nil }
    }

    /// Whether a field with this name is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    /// Whether `a` and `b` have the same two words (then they are the same string; unequal words say nothing).
    @inlinable
    static func sameRepresentation(_ a: String, _ b: String) -> Bool {
        withUnsafeBytes(of: a) { a in
            withUnsafeBytes(of: b) { b in
                a.count == 16 && b.count == 16
                    && a.loadUnaligned(as: UInt64.self) == b.loadUnaligned(as: UInt64.self)
                    && a.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == b.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            }
        }
    }

    /// ASCII case-insensitive comparison; header names are ASCII tokens.
    @inlinable
    public static func equalsIgnoringCase(_ a: String, _ b: String) -> Bool {
        // Different lengths differ whatever the case (a length is stored, not counted): most fields of a lookup end here.
        guard a.utf8.count == b.utf8.count else { return false }
        // The same representation is the same string: a small (inline, up to 15 bytes) string's two words hold its
        // bytes, so a name the parser read (`Authorization`) and the literal looked up are equal here without
        // copying either to the stack; two words of a large string name its storage.
        if sameRepresentation(a, b) { return true }
        var a = a, b = b
        return a.withUTF8 { ua in
            b.withUTF8 { ub in
                guard ua.count == ub.count else { return false }
                // The usual match is the same spelling (`Authorization` on every `/account` read): one `memcmp`
                // instead of the byte loop with its bounds checks.
                if ua.isEmpty || memcmp(ua.baseAddress!, ub.baseAddress!, ua.count) == 0 { return true }
                for i in 0..<ua.count where ua[i] != ub[i] {
                    if ua[i] | 0x20 != ub[i] | 0x20 { return false }
                    let lower = ua[i] | 0x20
                    if lower < 0x61 || lower > 0x7A { return false }
                }
                return true
            }
        }
    }
}
