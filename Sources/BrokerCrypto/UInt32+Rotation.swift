extension UInt32 {
    /// Rotates the bits left by `count` (0 < count < 32), the ROTL operation of FIPS 180-4 §3.2.
    @inline(__always)
    func rotatedLeft(_ count: UInt32) -> UInt32 {
        (self &<< count) | (self &>> (32 &- count))
    }

    /// Rotates the bits right by `count` (0 < count < 32), the ROTR operation of FIPS 180-4 §3.2.
    @inline(__always)
    func rotatedRight(_ count: UInt32) -> UInt32 {
        (self &>> count) | (self &<< (32 &- count))
    }
}
