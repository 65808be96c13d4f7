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
    public static func equals(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        var difference = UInt64(truncatingIfNeeded: left.count ^ right.count)
        let length = max(left.count, right.count)
        for index in 0..<length {
            let x: UInt8 = index < left.count ? left[index] : 0
            let y: UInt8 = index < right.count ? right[index] : 0
            difference |= UInt64(x ^ y)
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
