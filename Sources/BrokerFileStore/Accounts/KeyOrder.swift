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
