import BrokerCore
import Glibc

/// Byte order of account ids, compared with `memcmp`: the order of a snapshot's records and of ``SortedKeys``.
///
/// `ExactKey`'s own `<` walks two UTF-8 views element by element; a binary search over a million ids compares about
/// twenty times per lookup, so the ids' bytes are compared in one call here.
enum KeyOrder {
    /// Negative when `lhs` sorts before `rhs`, zero when they are the same bytes, positive after.
    static func compare(_ lhs: ExactKey, _ rhs: ExactKey) -> Int {
        var left = lhs.string
        return left.withUTF8 { left in compare(left, rhs) }
    }

    /// ``compare(_:_:)`` with the left side's bytes already at hand (a search compares one id with many).
    ///
    /// The right side's bytes are borrowed where the string holds them contiguously (always, for native strings), so
    /// a step of a search neither copies nor retains the id it looks at.
    @inline(__always)
    static func compare(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: ExactKey) -> Int {
        if let order = rhs.string.utf8.withContiguousStorageIfAvailable({ compare(lhs, $0) }) { return order }
        var right = rhs.string
        return right.withUTF8 { compare(lhs, $0) }
    }

    /// Byte order of two byte strings, as ``compare(_:_:)``.
    @inline(__always)
    static func compare(_ lhs: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(lhs.count, right.count)
        if common > 0 {
            let order = memcmp(lhs.baseAddress!, right.baseAddress!, common)
            if order != 0 { return Int(order) }
        }
        return lhs.count - right.count
    }

    /// An id's first 16 bytes as two big-endian words, zero-padded: comparing two of these as integers gives the ids'
    /// byte order whenever they differ (a shorter id is padded with zeros, and sorts first as a prefix does); when they
    /// are equal, the ids are compared in full.
    struct Prefix: Sendable {
        /// Bytes 0–7, the first in the most significant byte.
        var high: UInt64
        /// Bytes 8–15.
        var low: UInt64

        /// The prefix of `bytes`.
        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                (high, low) = (0, 0)
                return
            }
            if bytes.count >= 16 {
                high = UInt64(bigEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self))
                low = UInt64(bigEndian: UnsafeRawPointer(base + 8).loadUnaligned(as: UInt64.self))
                return
            }
            var words: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
            high = UInt64(bigEndian: words.0)
            low = UInt64(bigEndian: words.1)
        }

        /// The prefix of `key`'s bytes.
        init(_ key: borrowing ExactKey) {
            var string = key.string
            self = string.withUTF8 { Prefix($0) }
        }

        /// Negative, zero or positive as `self` sorts before, with or after `other` (zero: compare the ids in full).
        @inline(__always)
        func compare(_ other: Prefix) -> Int {
            if high != other.high { return high < other.high ? -1 : 1 }
            if low != other.low { return low < other.low ? -1 : 1 }
            return 0
        }
    }

    /// The position of `key` in `keys[..<count]` (sorted, distinct), whose ``Prefix``es are `prefixes[..<count]`,
    /// or nil when it is not there.
    ///
    /// Each step compares two pairs of integers; only ids with the same first 16 bytes are compared in full, so a
    /// step neither copies a short (inline) id to the stack nor calls `memcmp`, which cost about 68 instructions a step.
    static func position(of key: ExactKey, in keys: [ExactKey], prefixes: [Prefix], count: Int) -> Int? {
        guard count > 0 else { return nil }
        precondition(count <= keys.count && count <= prefixes.count, "KeyOrder.position: count beyond the keys")
        var target = key.string
        return target.withUTF8 { target -> Int? in
            let needle = Prefix(target)
            return prefixes.withUnsafeBufferPointer { prefixes -> Int? in
                var low = 0
                var high = count
                while low < high {
                    let middle = (low + high) >> 1
                    var order = needle.compare(prefixes[middle])
                    if order == 0 { order = keys.withUnsafeBufferPointer { compare(target, $0[middle]) } }
                    if order == 0 { return middle }
                    if order > 0 { low = middle + 1 } else { high = middle }
                }
                return nil
            }
        }
    }

    /// The position of `key` in `keys[..<count]` (sorted, distinct), or nil when it is not there.
    static func position(of key: ExactKey, in keys: [ExactKey], count: Int) -> Int? {
        guard count > 0 else { return nil }
        precondition(count <= keys.count, "KeyOrder.position: count beyond the keys")
        var target = key.string
        return target.withUTF8 { target -> Int? in
            keys.withUnsafeBufferPointer { keys -> Int? in
                var low = 0
                var high = count
                while low < high {
                    let middle = (low + high) >> 1
                    let order = compare(target, keys[middle])
                    if order == 0 { return middle }
                    if order > 0 { low = middle + 1 } else { high = middle }
                }
                return nil
            }
        }
    }
}
