/// Bytes gathered for one message on a hot path (a response body, a log line), in one growing allocation.
///
/// An append is a bounds check and a copy. `[UInt8].append(contentsOf:)` costs a uniqueness check and a generic
/// reservation on every call, and appending a `String`'s `utf8` view copies through a slower generic path: on
/// `GET /account`, which appends some sixty pieces to its body and audit line, those were the larger part of the
/// work.
///
/// The appends are `@inlinable`: each is a few instructions once inlined, and a call into this module per piece
/// cost as much as the copy.
public struct ByteWriter: ~Copyable {
    /// The allocation, `capacity` bytes of which the first `written` hold what was appended.
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    @usableFromInline var written: Int
    /// Whether ``base`` was allocated here (and is deallocated here), rather than lent by ``init(startingIn:)``.
    @usableFromInline var owned: Bool
    /// The number of bytes written so far.
    public var count: Int { written }

    /// An empty writer with room for `capacity` bytes before it grows.
    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
        written = 0
        owned = true
    }

    /// An empty writer that starts in `buffer` (stack memory of the caller, say, for a line made and handed over
    /// within one call): no allocation unless the bytes outgrow it, when they move to one of the writer's own.
    /// The writer must not outlive `buffer`.
    public init(startingIn buffer: UnsafeMutableBufferPointer<UInt8>) {
        if let start = buffer.baseAddress, buffer.count >= 16 {
            base = start
            capacity = buffer.count
            owned = false
        } else {
            capacity = 16
            base = .allocate(capacity: 16)
            owned = true
        }
        written = 0
    }

    deinit { if owned { base.deallocate() } }

    /// Appends one byte.
    @inlinable
    public mutating func append(_ byte: UInt8) {
        room(1).pointee = byte
        written &+= 1
    }

    /// Appends bytes.
    @inlinable
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        room(bytes.count).initialize(from: source, count: bytes.count)
        written &+= bytes.count
    }

    /// Appends `"`, the bytes, and `"` in one step; the caller has checked that they need no escaping.
    @inlinable
    public mutating func append(quoting bytes: UnsafeBufferPointer<UInt8>) {
        let p = room(bytes.count + 2)
        p[0] = 0x22
        if let source = bytes.baseAddress { (p + 1).initialize(from: source, count: bytes.count) }
        p[bytes.count + 1] = 0x22
        written &+= bytes.count + 2
    }

    /// Appends a literal's bytes.
    ///
    /// A string literal of more than one scalar has its bytes in the binary: they are copied from there without
    /// `withUTF8Buffer`'s closure, which the optimiser left as a call of about fifty instructions per literal.
    @inlinable @inline(__always)
    public mutating func append(_ literal: StaticString) {
        guard literal.hasPointerRepresentation else { return literal.withUTF8Buffer { append($0) } }
        let n = literal.utf8CodeUnitCount
        room(n).initialize(from: literal.utf8Start, count: n)
        written &+= n
    }

    /// Appends a string's UTF-8 bytes.
    @inlinable
    public mutating func append(string text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Appends an array's bytes.
    @inlinable
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Appends `value` in decimal, as `String(value)` spells it (a `-` before a negative one), with no string made.
    @inlinable
    public mutating func append(decimal value: Int) {
        // 20 bytes hold Int.min's digits and its sign.
        write(atMost: 20) { p in
            var magnitude = value.magnitude
            var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
            return withUnsafeMutableBytes(of: &digits) { scratch in
                var end = 24
                repeat {
                    end &-= 1
                    scratch[end] = 0x30 &+ UInt8(truncatingIfNeeded: magnitude % 10)
                    magnitude /= 10
                } while magnitude > 0
                var n = 0
                if value < 0 {
                    p[0] = 0x2D
                    n = 1
                }
                for i in end..<24 {
                    p[n] = scratch[i]
                    n &+= 1
                }
                return n
            }
        }
    }

    /// Lets `body` write at most `maximum` bytes in place at the end; `body` returns how many it wrote.
    @inlinable
    public mutating func write(atMost maximum: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        let n = body(room(maximum))
        precondition(n >= 0 && n <= maximum, "ByteWriter.write: more bytes written than asked for")
        written &+= n
    }

    /// Calls `body` with the bytes written so far.
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// The bytes written so far, as an array.
    ///
    /// Copied from a buffer pointer, which the optimiser specialises: `Array(unsafeUninitializedCapacity:)` calls
    /// into the standard library unspecialised, where finding the array's type at run time costs more than the copy.
    public var bytes: [UInt8] {
        [UInt8](UnsafeBufferPointer(start: base, count: count))
    }

    /// The address to write `n` more bytes at, growing the allocation when they do not fit.
    @inlinable
    mutating func room(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        if n > capacity &- written { grow(toHold: written + n) }
        return base + written
    }

    /// Moves the bytes to an allocation of at least `needed` (doubling, so appends cost amortised constant time).
    @usableFromInline
    mutating func grow(toHold needed: Int) {
        var larger = capacity * 2
        while larger < needed { larger *= 2 }
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: count)
        if owned { base.deallocate() }
        base = moved
        capacity = larger
        owned = true
    }
}
