/// Bytes gathered for one message on a hot path (a response body, a log line), in one growing allocation.
///
/// An append is a bounds check and a copy. `[UInt8].append(contentsOf:)` costs a uniqueness check and a generic
/// reservation on every call, and appending a `String`'s `utf8` view copies through a slower generic path: on
/// `GET /account`, which appends some sixty pieces to its body and audit line, those were the larger part of the
/// work.
public struct ByteWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// The number of bytes written so far.
    public private(set) var count = 0

    /// An empty writer with room for `capacity` bytes before it grows.
    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Appends one byte.
    @inline(__always)
    public mutating func append(_ byte: UInt8) {
        room(1).pointee = byte
        count &+= 1
    }

    /// Appends bytes.
    @inline(__always)
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        room(bytes.count).initialize(from: source, count: bytes.count)
        count &+= bytes.count
    }

    /// Appends a literal's bytes.
    @inline(__always)
    public mutating func append(_ literal: StaticString) {
        literal.withUTF8Buffer { append($0) }
    }

    /// Appends a string's UTF-8 bytes.
    @inline(__always)
    public mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Appends an array's bytes.
    @inline(__always)
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Lets `body` write at most `maximum` bytes in place at the end; `body` returns how many it wrote.
    @inline(__always)
    public mutating func write(atMost maximum: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        let written = body(room(maximum))
        precondition(written >= 0 && written <= maximum, "ByteWriter.write: more bytes written than asked for")
        count &+= written
    }

    /// Calls `body` with the bytes written so far.
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// The bytes written so far, as an array.
    public var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 { buffer.baseAddress!.initialize(from: base, count: count) }
            initialized = count
        }
    }

    /// Forgets what was written, keeping the allocation.
    public mutating func removeAll() { count = 0 }

    /// The address to write `n` more bytes at, growing the allocation when they do not fit.
    @inline(__always)
    private mutating func room(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        if n > capacity &- count { grow(toHold: count + n) }
        return base + count
    }

    private mutating func grow(toHold needed: Int) {
        var larger = capacity * 2
        while larger < needed { larger *= 2 }
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = larger
    }
}
