/// Comparisons whose running time does not depend on where two secrets differ.
public enum ConstantTime {
    /// Returns whether `a` and `b` hold the same bytes.
    ///
    /// Every position up to the longer length is visited and differences are OR-ed together,
    /// so timing reveals at most the two lengths, never the first differing position.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBufferPointer { left in b.withUnsafeBufferPointer { right in equals(left, right) } }
    }

    /// Whether two byte buffers are equal, in time that depends only on their lengths.
    ///
    /// The common length is compared eight bytes at a time (an API key is checked on every `/account` read), then
    /// the rest byte by byte; the bytes past the shorter buffer are OR-ed in against zero. Every branch depends on
    /// the lengths only.
    public static func equals(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        var difference = UInt64(truncatingIfNeeded: left.count ^ right.count)
        let common = min(left.count, right.count)
        var index = 0
        if common >= 8, let l = left.baseAddress, let r = right.baseAddress {
            let leftWords = UnsafeRawPointer(l)
            let rightWords = UnsafeRawPointer(r)
            while index + 8 <= common {
                difference |=
                    leftWords.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    ^ rightWords.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                index += 8
            }
        }
        while index < common {
            difference |= UInt64(left[index] ^ right[index])
            index += 1
        }
        let longer = left.count > right.count ? left : right
        while index < longer.count {
            difference |= UInt64(longer[index])
            index += 1
        }
        return difference == 0
    }

    /// Returns whether two strings have the same UTF-8 bytes, compared in constant time.
    ///
    /// No Unicode normalization happens: `"é"` precomposed and decomposed are different secrets.
    public static func equals(_ a: String, _ b: String) -> Bool {
        equals(Array(a.utf8), Array(b.utf8))
    }
}
